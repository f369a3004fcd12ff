import { mulberry32, pageSeed, randomInt, type Random } from './prng.js';
import { buildParagraphPool, words } from './text-pool.js';

export interface SiteShape {
  pages: number;
  linksPerPage: number;
  pageBytes: number;
  seed: number;
  /** Adds `/missing` (404) and `/error` (500) links to the home page. */
  brokenLinks: boolean;
  /**
   * Links name `/r/n` instead of `/p/n`, which answers with a 301 to `/p/n`: every page but the
   * home page is reached through a redirect on its own host (the home page stays linked as `/`).
   */
  redirectLinks: boolean;
}

export const MISSING_PATH = '/missing';
export const ERROR_PATH = '/error';

/** Page 0 is the home page `/`; page n ≥ 1 lives at `/p/n`. */
export function pagePath(page: number): string {
  return page === 0 ? '/' : `/p/${page}`;
}

/** The page number a request path names, or undefined (→ 404). Rejects `/p/0` and leading zeros. */
export function parsePagePath(pathname: string, pages: number): number | undefined {
  if (pathname === '/') return 0;
  return pathname.startsWith('/p/') ? pageNumber(pathname.slice(3), pages) : undefined;
}

/** The page a redirect path `/r/n` (n ≥ 1) leads to, or undefined. */
export function parseRedirectPath(pathname: string, pages: number): number | undefined {
  return pathname.startsWith('/r/') ? pageNumber(pathname.slice(3), pages) : undefined;
}

function pageNumber(digits: string, pages: number): number | undefined {
  if (!/^[1-9][0-9]{0,9}$/.test(digits)) return undefined;
  const page = Number(digits);
  return page < pages ? page : undefined;
}

/** Where a link to `page` points: the page, or its redirect (`/r/n`) on a site of redirect links. */
function linkPath(shape: SiteShape, page: number): string {
  return shape.redirectLinks && page !== 0 ? `/r/${page}` : pagePath(page);
}

/**
 * Renders page n deterministically: same seed and shape, same bytes (the origin only appears in
 * absolute links). Every page links to n+1, so a crawl from `/` reaches the whole site; the other
 * links are pseudo-random, in root-relative, path-relative and absolute form, with a duplicate, a
 * same-page fragment and a fragment on another page, as real sites have.
 */
export function createPageRenderer(shape: SiteShape, origin: string): (page: number) => Buffer {
  const pool = buildParagraphPool(shape.seed);
  return (page) => {
    const random = mulberry32(pageSeed(shape.seed, page));
    const title = `Page ${page}: ${words(random, 4)}`;
    const head =
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n` +
      `<body id="top"><h1>${title}</h1>\n`;
    const list = `<ul class="links">\n${renderLinks(shape, origin, page, random)}</ul>\n`;
    const tail = '</body></html>\n';
    const body = fillParagraphs(pool, random, shape.pageBytes - head.length - list.length - tail.length);
    // All text is ASCII, so latin1 gives the same bytes as utf-8 and encodes faster.
    return Buffer.from(head + body + list + tail, 'latin1');
  };
}

function renderLinks(shape: SiteShape, origin: string, page: number, random: Random): string {
  const hrefs: string[] = [];
  const next = page + 1 < shape.pages ? page + 1 : 0;
  hrefs.push(linkPath(shape, next), '#top');
  hrefs.push(`${linkPath(shape, randomInt(random, shape.pages))}#section-${randomInt(random, 9)}`);
  hrefs.push(origin + linkPath(shape, next)); // the same target again, written absolutely
  for (let k = 0; hrefs.length < shape.linksPerPage; k++) {
    hrefs.push(href(shape, randomInt(random, shape.pages), page, origin, k % 3));
  }
  if (shape.brokenLinks && page === 0) hrefs.push(MISSING_PATH, ERROR_PATH);
  return hrefs.map((h) => `<li><a href="${h}">${h}</a></li>\n`).join('');
}

function href(shape: SiteShape, target: number, from: number, origin: string, form: number): string {
  if (form === 0) return linkPath(shape, target);
  if (form === 2) return origin + linkPath(shape, target);
  // Path-relative: resolved against `/` on the home page and against `/p/n` elsewhere.
  if (from === 0) return target === 0 ? './' : linkPath(shape, target).slice(1);
  if (target === 0) return '../';
  return shape.redirectLinks ? `../r/${target}` : String(target);
}

/** Paragraphs from the pool until exactly `budget` bytes are used (the last one is cut to fit). */
export function fillParagraphs(pool: readonly string[], random: Random, budget: number): string {
  let out = '';
  let left = budget;
  while (left > 8) {
    const text = pool[randomInt(random, pool.length)] ?? '';
    const take = Math.min(text.length, left - 8);
    out += `<p>${text.slice(0, take)}</p>\n`;
    left -= take + 8;
  }
  return out + '\n'.repeat(Math.max(0, left));
}
