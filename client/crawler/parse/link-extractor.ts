import { DEFAULT_MAX_LINKS_PER_PAGE, DEFAULT_MAX_URL_LENGTH } from '../../../shared/protocol/link-limits.js';
import { MAX_URL_LENGTH, normalizeUrl, tryNormalizeUrl } from '../../../shared/url/normalize.js';
import { LinkCollector } from './link-collector.js';
import { encodeQueryIn, urlEncodingOf } from './query-encoding.js';
import { scanTags } from './tag-scanner.js';

/** How a page is read and how many of its links are kept. */
export interface ExtractOptions {
  /**
   * The WHATWG name of the encoding the page was decoded from (default UTF-8). The query of a link in
   * a legacy-encoded page is percent-encoded in that encoding, as browsers do (see query-encoding.ts).
   */
  encoding?: string;
  /** Links whose normalised form is longer are dropped (default `DEFAULT_MAX_URL_LENGTH`). */
  maxUrlLength?: number;
  /** Distinct links kept, the first in document order (default `DEFAULT_MAX_LINKS_PER_PAGE`). */
  maxLinks?: number;
  /**
   * The page is XHTML (`application/xhtml+xml`): self-closing tags are empty elements and CDATA
   * sections are text everywhere, as an XML parser reads them (see `ScanOptions.xml`).
   */
  xml?: boolean;
}

/** Links dropped by the soft limits, counted once per distinct link. */
export interface DroppedLinks {
  /** Longer than `maxUrlLength`. */
  tooLong: number;
  /** Beyond the first `maxLinks` distinct links. */
  overLimit: number;
}

/** The outlinks of one HTML page. */
export interface ExtractedLinks {
  /** Every distinct outlink, normalised (`normalizeUrl`), in order of first appearance. */
  links: string[];
  /**
   * The links to crawl, in the same order: those with at least one occurrence not marked
   * `rel="nofollow"`; empty when a robots `<meta>` says `nofollow` or `none`.
   */
  follow: string[];
  /** A robots `<meta>` (name `robots` or `ackcrawl`) said `nofollow` or `none`. */
  metaNofollow: boolean;
  /**
   * The URL relative hrefs were resolved against, as WHATWG URL serialises it (not normalised): the
   * first `<base href>` resolved against the page URL, else the page URL.
   */
  baseUrl: string;
  /**
   * The first `<link rel=canonical href>` before `<body>`, resolved and normalised; null when there is
   * none or it is not a usable http(s) URL. Recorded, not followed.
   */
  canonicalUrl: string | null;
  /**
   * The target of the first `<meta http-equiv=refresh>` that names another URL, resolved and
   * normalised. It is also one of `links`, at its place in the document, and followed like them.
   */
  refreshUrl: string | null;
  dropped: DroppedLinks;
}

/**
 * Extracts the links of an HTML page: `href` of `<a>` and `<area>` (and of SVG `<a>`, `href` or
 * `xlink:href`, which navigate as well) and the target of `<meta http-equiv=refresh>`, in document
 * order; and its canonical URL.
 *
 * What counts, and why:
 * - The page is tokenised as an HTML parser would (parse5), not searched with patterns: comments,
 *   `<script>`, `<style>`, `<title>`, `<textarea>` and other raw-text content yield no links, and
 *   entities, upper-case names and unquoted attributes are handled as browsers handle them.
 * - `<noscript>` content is read as markup, as a browser with scripting disabled reads it: we run no
 *   script, so those are the links a visitor like us actually gets.
 * - `<template>` content is skipped: it is inert until a script instantiates it, is often full of
 *   placeholders, and browsers' `document.links` leaves it out too.
 * - Hrefs resolve against the first `<base>` that has an `href`, wherever it is (links before it
 *   included), as in browsers; a `<base href>` that does not parse, or is `data:` / `javascript:`, is
 *   ignored, as the HTML spec says.
 * - Non-ASCII in a path becomes UTF-8 escapes; non-ASCII in a query becomes escapes of the page's own
 *   encoding (`options.encoding`), as the URL standard says for a document's links.
 * - Links that are not http(s) (`javascript:`, `mailto:`, `tel:`, `data:`, ...) or that do not parse
 *   are dropped, as are links back to the page itself (after normalisation: `href=""`, `href="#top"`,
 *   or the page's own URL).
 * - Soft limits: a link longer than `maxUrlLength` once normalised, and distinct links beyond the
 *   first `maxLinks`, are dropped and counted in `dropped`.
 * - `rel` is a case-insensitive, whitespace-separated token list; `nofollow` in it keeps that occurrence
 *   out of `follow`. Other hints (`ugc`, `sponsored`) do not.
 *
 * Synchronous and fast enough to run inline in the crawl loop: several thousand 10 KB pages per second
 * on one core (`scripts/bench/link-extractor.ts` measures it); a 2 MB page blocks for about 100 ms.
 *
 * @throws InvalidInputError (`normalizeUrl` codes) when `pageUrl` is not a valid http(s) URL.
 */
export function extractLinks(source: string, pageUrl: string, options: ExtractOptions = {}): ExtractedLinks {
  const page = normalizeUrl(pageUrl);
  const maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const maxLinks = options.maxLinks ?? DEFAULT_MAX_LINKS_PER_PAGE;
  const encoding = urlEncodingOf(options.encoding);
  const collector = new LinkCollector();
  scanTags(source, collector, { scripting: false, xml: options.xml === true });

  const baseUrl = resolveBaseUrl(collector.baseHref, pageUrl);
  const resolve = (href: string): string | null => tryNormalizeUrl(encodeQueryIn(href, encoding), baseUrl);
  /** Normalised link -> whether some occurrence may be followed; a Map keeps first-seen order. */
  const followable = new Map<string, boolean>();
  /** Distinct links dropped by a limit; only allocated when one is hit. */
  let tooLong: Set<string> | null = null;
  let overLimit: Set<string> | null = null;
  const { hrefs, nofollow } = collector;
  for (let i = 0; i < hrefs.length; i++) {
    const href = hrefs[i] as string;
    // The normaliser refuses inputs over MAX_URL_LENGTH outright; those are too long for any setting.
    const link = href.length > MAX_URL_LENGTH ? href : resolve(href);
    if (link === null || link === page) continue;
    if (link.length > maxUrlLength) {
      (tooLong ??= new Set()).add(link);
      continue;
    }
    const seen = followable.get(link);
    if (seen === undefined && followable.size >= maxLinks) {
      (overLimit ??= new Set()).add(link);
      continue;
    }
    if (seen !== true) followable.set(link, nofollow[i] !== true);
  }

  const links = [...followable.keys()];
  const follow = collector.metaNofollow ? [] : links.filter((link) => followable.get(link) === true);
  const refresh = collector.refreshHref === null ? null : resolve(collector.refreshHref);
  const canonical = collector.canonicalHref === null ? null : resolve(collector.canonicalHref);
  return {
    links,
    follow,
    metaNofollow: collector.metaNofollow,
    baseUrl,
    canonicalUrl: canonical,
    refreshUrl: refresh !== null && followable.has(refresh) ? refresh : null,
    dropped: { tooLong: tooLong?.size ?? 0, overLimit: overLimit?.size ?? 0 },
  };
}

/** The HTML spec's frozen base URL: the base element's href if usable, else the document URL. */
function resolveBaseUrl(baseHref: string | null, pageUrl: string): string {
  if (baseHref !== null) {
    try {
      const base = new URL(baseHref, pageUrl);
      if (base.protocol !== 'data:' && base.protocol !== 'javascript:') return base.href;
    } catch {
      // An unparsable <base href> is ignored, as in browsers.
    }
  }
  return new URL(pageUrl).href;
}
