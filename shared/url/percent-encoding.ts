/**
 * Percent-encoding normalisation (RFC 3986 §6.2.2.1 and §6.2.2.2) for the path and query of a URL that
 * WHATWG URL has already serialised.
 *
 * WHATWG URL encodes characters that must be encoded but never decodes what a page author encoded, so
 * `/%7Euser/` and `/~user/` stay two spellings of one resource; they would be two frontier entries and
 * two fetches. RFC 3986 says escapes of unreserved characters are equivalent to the characters and
 * that hex digits are case-insensitive, so we decode the former and upper-case the latter. Escapes of
 * reserved characters (`%2F`, `%3F`, `%26`, `%3D`, `%23`, ...) are kept: decoding them changes meaning
 * (`a%2Fb` is one path segment, `a/b` two; `%26` inside a query value is not a separator).
 */

/** 1 at the char codes of RFC 3986 unreserved characters: ALPHA / DIGIT / "-" / "." / "_" / "~". */
const UNRESERVED = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) UNRESERVED[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) UNRESERVED[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) UNRESERVED[c] = 1;
for (const ch of '-._~') UNRESERVED[ch.charCodeAt(0)] = 1;

/** Value of one hex digit, or -1 (also for NaN, which `charCodeAt` returns past the end). */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * Decodes `%XX` escapes of unreserved characters and upper-cases the hex digits of every other escape.
 * A `%` that does not start a valid escape is left as it is (WHATWG URL leaves it too). Returns the
 * input itself when nothing changes, so the common case allocates nothing.
 */
export function normalizePercentEncoding(text: string): string {
  let out = '';
  let copiedUpTo = 0;
  for (let at = text.indexOf('%'); at !== -1; at = text.indexOf('%', at + 1)) {
    const high = hexValue(text.charCodeAt(at + 1));
    const low = high < 0 ? -1 : hexValue(text.charCodeAt(at + 2));
    if (low < 0) continue;
    const byte = high * 16 + low;
    let replacement: string;
    if (UNRESERVED[byte] === 1) {
      replacement = String.fromCharCode(byte);
    } else {
      const escape = text.slice(at, at + 3);
      replacement = escape.toUpperCase();
      if (replacement === escape) {
        at += 2;
        continue;
      }
    }
    out += text.slice(copiedUpTo, at) + replacement;
    copiedUpTo = at + 3;
    at += 2;
  }
  return copiedUpTo === 0 ? text : out + text.slice(copiedUpTo);
}
