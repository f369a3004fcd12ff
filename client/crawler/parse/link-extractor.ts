import { html, type Token } from 'parse5';
import { normalizeUrl, tryNormalizeUrl } from '../../../shared/url/normalize.js';
import { isRobotsMetaName, parseRobotsDirectives } from './meta-robots.js';
import { scanTags, type TagVisitor } from './tag-scanner.js';

const $ = html.TAG_ID;
const NS = html.NS;

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
}

/**
 * Extracts the links of an HTML page: `href` of `<a>` and `<area>` (and of SVG `<a>`, `href` or
 * `xlink:href`, which navigate as well), in document order.
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
 * - Links that are not http(s) (`javascript:`, `mailto:`, `tel:`, `data:`, ...), that do not parse, or
 *   that are longer than `MAX_URL_LENGTH` are dropped, as are links back to the page itself (after
 *   normalisation: `href=""`, `href="#top"`, or the page's own URL).
 * - `rel` is a case-insensitive, whitespace-separated token list; `nofollow` in it keeps that occurrence
 *   out of `follow`. Other hints (`ugc`, `sponsored`) do not.
 *
 * Synchronous and fast enough to run inline in the crawl loop: several thousand 10 KB pages per second
 * on one core (`scripts/bench/link-extractor.ts` measures it); a 2 MB page blocks for about 100 ms.
 * There is no cap on the number of links: callers bound what they enqueue.
 *
 * @throws InvalidInputError (`normalizeUrl` codes) when `pageUrl` is not a valid http(s) URL.
 */
export function extractLinks(source: string, pageUrl: string): ExtractedLinks {
  const page = normalizeUrl(pageUrl);
  const collector = new LinkCollector();
  scanTags(source, collector, { scripting: false });

  const baseUrl = resolveBaseUrl(collector.baseHref, pageUrl);
  /** Normalised link -> whether some occurrence may be followed; a Map keeps first-seen order. */
  const followable = new Map<string, boolean>();
  const { hrefs, nofollow } = collector;
  for (let i = 0; i < hrefs.length; i++) {
    const link = tryNormalizeUrl(hrefs[i] as string, baseUrl);
    if (link === null || link === page) continue;
    if (followable.get(link) !== true) followable.set(link, nofollow[i] !== true);
  }

  const links = [...followable.keys()];
  const follow = collector.metaNofollow ? [] : links.filter((link) => followable.get(link) === true);
  return { links, follow, metaNofollow: collector.metaNofollow, baseUrl };
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

/** Collects raw hrefs and the robots signals while the tags stream by; resolution comes after. */
class LinkCollector implements TagVisitor {
  readonly hrefs: string[] = [];
  /** `nofollow[i]`: `hrefs[i]` came from an element whose rel contains `nofollow`. */
  readonly nofollow: boolean[] = [];
  baseHref: string | null = null;
  metaNofollow = false;
  /** How many `<template>` elements we are inside; their content is not part of the page. */
  private templateDepth = 0;

  startTag(token: Token.TagToken, namespace: html.NS): void {
    const tagId = token.tagID;
    if (namespace !== NS.HTML) {
      if (tagId === $.A && namespace === NS.SVG && this.templateDepth === 0) this.addSvgLink(token);
      return;
    }
    if (tagId === $.TEMPLATE) {
      this.templateDepth++;
      return;
    }
    if (this.templateDepth > 0) return;
    if (tagId === $.A || tagId === $.AREA) {
      const href = attribute(token, 'href');
      if (href !== null) this.addLink(href, attribute(token, 'rel'));
    } else if (tagId === $.BASE) {
      if (this.baseHref === null) this.baseHref = attribute(token, 'href');
    } else if (tagId === $.META) {
      this.readMeta(token);
    }
  }

  endTag(token: Token.TagToken, namespace: html.NS): void {
    if (token.tagID === $.TEMPLATE && namespace === NS.HTML && this.templateDepth > 0) {
      this.templateDepth--;
    }
  }

  private addLink(href: string, rel: string | null): void {
    this.hrefs.push(href);
    this.nofollow.push(rel !== null && relHasNofollow(rel));
  }

  /** SVG 2 `href` wins over the older `xlink:href` when an element has both. */
  private addSvgLink(token: Token.TagToken): void {
    let href: string | null = null;
    for (const attr of token.attrs) {
      if (attr.name !== 'href') continue;
      if (attr.prefix === undefined) {
        href = attr.value;
        break;
      }
      if (attr.prefix === 'xlink' && href === null) href = attr.value;
    }
    if (href !== null) this.addLink(href, attribute(token, 'rel'));
  }

  private readMeta(token: Token.TagToken): void {
    const name = attribute(token, 'name');
    if (name === null || !isRobotsMetaName(name)) return;
    const content = attribute(token, 'content');
    if (content !== null && parseRobotsDirectives(content).nofollow) this.metaNofollow = true;
  }
}

/** The value of an unprefixed attribute; names are already lower-case and unique per tag. */
function attribute(token: Token.TagToken, name: string): string | null {
  for (const attr of token.attrs) {
    if (attr.name === name && attr.prefix === undefined) return attr.value;
  }
  return null;
}

function relHasNofollow(rel: string): boolean {
  const lower = rel.toLowerCase();
  if (!lower.includes('nofollow')) return false;
  return lower.split(/[\t\n\f\r ]+/).includes('nofollow');
}
