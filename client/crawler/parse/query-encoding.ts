import '@exodus/bytes/encoding.js'; // enables the legacy multi-byte encoders percentEncodeAfterEncoding uses
import { percentEncodeAfterEncoding } from '@exodus/bytes/whatwg.js';

/**
 * The URL standard parses a link found in a document with the document's encoding: the path is
 * always UTF-8, but the query is percent-encoded in the document's encoding
 * (https://url.spec.whatwg.org/#query-state). A GBK page's `<a href="/s?q=中文">` asks the server for
 * `/s?q=%D6%D0%CE%C4`, the GBK bytes, and that is what the server of a GBK site expects. A character
 * the encoding cannot represent is sent as the escaped HTML reference `%26%23NNNN%3B`, as browsers do.
 */

/** The encoding a document's URLs use: its own, except UTF-16 and replacement, which use UTF-8. */
export function urlEncodingOf(documentEncoding: string | null | undefined): string {
  if (!documentEncoding) return 'utf-8';
  const lower = documentEncoding.toLowerCase();
  return lower === 'utf-16le' || lower === 'utf-16be' || lower === 'replacement' ? 'utf-8' : lower;
}

const NON_ASCII = /[\u0080-\uffff]/;
/** Runs of UTF-16 code units beyond ASCII: surrogate pairs stay together, lone surrogates too. */
const NON_ASCII_RUNS = /[\u0080-\uffff]+/g;

/**
 * `href` with the non-ASCII characters of its query percent-encoded in `encoding` (a WHATWG encoding
 * name, lower-case, as `urlEncodingOf` gives). Everything else is left to the URL parser, which then
 * finds only ASCII in the query and keeps those escapes. For UTF-8 documents, or an href without a
 * non-ASCII query, `href` itself is returned.
 */
export function encodeQueryIn(href: string, encoding: string): string {
  if (encoding === 'utf-8') return href;
  // For http(s) and relative URLs the first `?` starts the query and the next `#` ends it: neither
  // may appear raw in a scheme, host or path.
  const start = href.indexOf('?');
  if (start === -1) return href;
  const hash = href.indexOf('#', start);
  const end = hash === -1 ? href.length : hash;
  const query = href.slice(start + 1, end);
  if (!NON_ASCII.test(query)) return href;
  const encoded = query.replace(NON_ASCII_RUNS, (run) => percentEncodeAfterEncoding(encoding, run, ''));
  return href.slice(0, start + 1) + encoded + href.slice(end);
}
