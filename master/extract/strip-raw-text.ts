/**
 * Removes what no extractor reads before the page is parsed: `<script>` (but JSON-LD, which
 * holds metadata), `<style>`, `<template>`, `<noscript>`, inline `<svg>` (icons) and comments. On real pages they are a
 * third to nine tenths of the bytes (inline bundles, JSON state, CSS), and building DOM nodes for
 * them is most of a parse. Readability removes the same elements first thing, so its result does
 * not change.
 *
 * Script, style and comment contents end at the first closing token in HTML's tokenizer too, so
 * cutting at `indexOf` is what a parser would do (an `<svg>` nested in an `<svg>`, which is rare,
 * is cut at the inner end tag and leaves the outer one's tail as stray markup); an element left open runs to the end, as it
 * does in a browser. One pass with `indexOf` from a moving cursor: linear even in a hostile page
 * of a million unclosed `<script`s.
 */
const ELEMENTS = ['script', 'style', 'template', 'noscript', 'svg'] as const;

export function stripRawText(html: string): string {
  const lower = html.toLowerCase();
  const parts: string[] = [];
  let cursor = 0;
  let searchFrom = 0;
  while (searchFrom < html.length) {
    const open = lower.indexOf('<', searchFrom);
    if (open < 0) break;
    const end = skipEnd(lower, open);
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

/** Where the comment or element starting at `open` ends, or null to keep it. */
function skipEnd(lower: string, open: number): number | null {
  if (lower.startsWith('<!--', open)) {
    const close = lower.indexOf('-->', open + 4);
    return close < 0 ? lower.length : close + 3;
  }
  for (const name of ELEMENTS) {
    if (!lower.startsWith(name, open + 1)) continue;
    const after = lower.charCodeAt(open + 1 + name.length);
    // `<script>`, `<script type=…>`, `<script/>`: not `<scripts>` or `<style-guide>`.
    if (!(after === 62 || after === 47 || after === 32 || (after >= 9 && after <= 13))) return null;
    const tagEnd = lower.indexOf('>', open);
    if (name === 'script' && tagEnd > 0 && /ld\+json/.test(lower.slice(open, tagEnd))) return null;
    const close = lower.indexOf(`</${name}`, open + name.length + 1);
    if (close < 0) return lower.length;
    const closeEnd = lower.indexOf('>', close);
    return closeEnd < 0 ? lower.length : closeEnd + 1;
  }
  return null;
}
