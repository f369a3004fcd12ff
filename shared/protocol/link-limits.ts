/**
 * Soft limits on the links a crawler takes from one page. They travel with a crawl's fetch settings
 * (`FetchSettings.maxUrlLength`, `.maxLinksPerPage`) so every crawler of a fleet applies the same;
 * a crawler that gets none applies these defaults. A page over a limit is still crawled and recorded:
 * only the extra links are dropped, and its record counts them (`linksDropped`).
 */

/**
 * Longest link kept, in characters of its normalised form. 2,048 is what sitemaps allow, about
 * what old browsers and many proxies accepted, and well above real navigation links; longer ones are
 * almost always session or tracking junk, or crawler traps that grow a URL by a segment per hop.
 */
export const DEFAULT_MAX_URL_LENGTH = 2048;

/** The most a setting may allow: the longest URL the normaliser accepts. */
export const MAX_URL_LENGTH_LIMIT = 8192;

/** Most distinct links kept per page, the first in document order. */
export const DEFAULT_MAX_LINKS_PER_PAGE = 5000;

/** The most a setting may allow: the most links one outcome frame may carry to the scheduler. */
export const MAX_LINKS_PER_PAGE_LIMIT = 100_000;
