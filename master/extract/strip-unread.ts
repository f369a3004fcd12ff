/**
 * Removes what no extractor reads before the page is parsed, in one pass over the text. Building
 * DOM nodes is most of the cost of cleaning a page (linkedom gives every node a map of listeners),
 * and these are a third to nine tenths of a real page's bytes:
 *
 * - Raw text: `<script>` (but JSON-LD, which holds metadata), `<style>`, `<template>`,
 *   `<noscript>`, inline `<svg>` (icons) and comments. Readability removes them first thing, so
 *   its result does not change. Their contents end at the first closing token in HTML's tokenizer
 *   too, so cutting at `indexOf` is what a parser would do (an `<svg>` nested in an `<svg>`, which
 *   is rare, is cut at the inner end tag and leaves the outer one's tail as stray markup); an
 *   element left open runs to the end, as it does in a browser.
 * - Page chrome and embeds: `<nav>`, `<aside>`, `<footer>`, `<select>`, `<button>`, `<iframe>`,
 *   `<object>`, `<map>`, `<picture>`, `<video>`, `<audio>`. Never an article's text; cut with
 *   their nested elements of the same name counted. One left open is kept (the parser decides),
 *   and that name is not looked for again in the page: linear even in a hostile page of a million
 *   unclosed `<nav>`s. `<form>` is kept (some sites wrap the whole page in one), and so is
 *   `<header>` (an article's own header holds its standfirst).
 *
 * Measured on the extraction bench's real pages (docs/extract.md): the same main text, a third
 * less time per page.
 */
const RAW_TEXT = ['script', 'style', 'template', 'noscript', 'svg'] as const;
const CHROME = [
  'nav',
  'aside',
  'footer',
  'select',
  'button',
  'iframe',
  'object',
  'map',
  'picture',
  'video',
  'audio',
] as const;

export function stripUnread(html: string): string {
  const lower = html.toLowerCase();
  const unclosed = new Set<string>();
  const parts: string[] = [];
  let cursor = 0;
  let searchFrom = 0;
  while (searchFrom < html.length) {
    const open = lower.indexOf('<', searchFrom);
    if (open < 0) break;
    const end = skipEnd(lower, open, unclosed);
    if (end === null) {
      searchFrom = open + 1;
      continue;
    }
    parts.push(html.slice(cursor, open));
    cursor = end;
    searchFrom = end;
  }
  parts.push(html.slice(cursor));
  return parts.join('');
}

/** `<name` at `at` is a start tag of that element: `<nav>`, `<nav class=…>`, `<nav/>`; not `<navbar>`. */
function startsTag(lower: string, at: number, name: string): boolean {
  if (!lower.startsWith(name, at + 1)) return false;
  const after = lower.charCodeAt(at + 1 + name.length);
  return after === 62 || after === 47 || after === 32 || (after >= 9 && after <= 13);
}

/** Where the comment or element starting at `open` ends, or null to keep it. */
function skipEnd(lower: string, open: number, unclosed: Set<string>): number | null {
  if (lower.startsWith('<!--', open)) {
    const close = lower.indexOf('-->', open + 4);
    return close < 0 ? lower.length : close + 3;
  }
  for (const name of RAW_TEXT) {
    if (!startsTag(lower, open, name)) continue;
    const tagEnd = lower.indexOf('>', open);
    if (name === 'script' && tagEnd > 0 && /ld\+json/.test(lower.slice(open, tagEnd))) return null;
    return afterEndTag(lower, lower.indexOf(`</${name}`, open + name.length + 1));
  }
  for (const name of CHROME) {
    if (unclosed.has(name) || !startsTag(lower, open, name)) continue;
    const close = matchingEndTag(lower, open, name);
    if (close < 0) {
      unclosed.add(name);
      return null;
    }
    return afterEndTag(lower, close);
  }
  return null;
}

/** The end tag closing the element `name` opened at `open`, nested ones of the same name counted; -1 if none. */
function matchingEndTag(lower: string, open: number, name: string): number {
  let depth = 1;
  let from = open + name.length + 1;
  // The next `<name` after the ones counted, found once and kept while it lies beyond the end tags.
  let inner = lower.indexOf(`<${name}`, from);
  for (;;) {
    const close = nextEndTag(lower, name, from);
    if (close < 0) return -1;
    while (inner >= 0 && inner < close) {
      if (startsTag(lower, inner, name)) depth += 1;
      inner = lower.indexOf(`<${name}`, inner + 1);
    }
    depth -= 1;
    if (depth === 0) return close;
    from = close + name.length + 2;
  }
}

/** The next `</name>` (or `</name …>`) from `from`, not `</named>`; -1 if none. */
function nextEndTag(lower: string, name: string, from: number): number {
  for (let at = lower.indexOf(`</${name}`, from); at >= 0; at = lower.indexOf(`</${name}`, at + 2)) {
    const after = lower.charCodeAt(at + 2 + name.length);
    if (after === 62 || after === 32 || (after >= 9 && after <= 13) || Number.isNaN(after)) return at;
  }
  return -1;
}

function afterEndTag(lower: string, close: number): number {
  if (close < 0) return lower.length;
  const closeEnd = lower.indexOf('>', close);
  return closeEnd < 0 ? lower.length : closeEnd + 1;
}
