import { MAX_URL_LENGTH, tryNormalizeUrl } from '../../../shared/url/normalize.js';
import type { ExtractedLinks } from '../parse/link-extractor.js';

/** A rendered page's links with where its scripts navigated the browser. */
export interface LinksWithNavigations extends ExtractedLinks {
  /** The first navigation kept, normalised; also one of `links`. Null when there was none. */
  navigationUrl: string | null;
}

/**
 * Adds a rendered page's refused navigations (`FetchedPage.navigations`: a script's
 * `location = …`, a meta refresh) to its links, after those of its DOM. Such a navigation is a
 * redirect by script; the browser is not let follow it past robots.txt and the target host's
 * politeness, so its target is crawled as a link, as a meta refresh's is in an unrendered page.
 *
 * The same rules as the DOM's links: normalised, the page itself left out, the URL length and the
 * page's link cap counted in `dropped`, not followed when a robots `<meta>` says `nofollow`.
 */
export function withNavigations(
  extracted: ExtractedLinks,
  navigations: readonly string[],
  pageUrl: string,
  limits: { maxUrlLength: number; maxLinks: number },
): LinksWithNavigations {
  const page = tryNormalizeUrl(pageUrl);
  const links = [...extracted.links];
  const known = new Set(links);
  const follow = [...extracted.follow];
  const followed = new Set(follow);
  let { tooLong, overLimit } = extracted.dropped;
  let navigationUrl: string | null = null;
  for (const target of navigations) {
    // The normaliser refuses inputs over MAX_URL_LENGTH outright; those are too long for any setting.
    const link = target.length > MAX_URL_LENGTH ? target : tryNormalizeUrl(target);
    if (link === null || link === page) continue;
    if (link.length > limits.maxUrlLength) {
      tooLong++;
      continue;
    }
    if (!known.has(link)) {
      if (links.length >= limits.maxLinks) {
        overLimit++;
        continue;
      }
      links.push(link);
      known.add(link);
    }
    navigationUrl ??= link;
    if (!extracted.metaNofollow && !followed.has(link)) {
      follow.push(link);
      followed.add(link);
    }
  }
  return { ...extracted, links, follow, navigationUrl, dropped: { tooLong, overLimit } };
}
