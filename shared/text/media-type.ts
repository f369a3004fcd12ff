/**
 * What kind of body a response carries: the `Content-Type` header's media type, or, when the header
 * is missing or says nothing (`unknown/unknown`, `application/unknown`, `*\/*`), a type sniffed from
 * the first bytes, following the WHATWG MIME Sniffing standard's "rules for identifying an unknown
 * MIME type" (https://mimesniff.spec.whatwg.org/#rules-for-identifying-an-unknown-mime-type) with its
 * HTML patterns on, as a browser navigating to the URL would. A declared type is never second-guessed:
 * `text/plain` full of tags stays text, `application/octet-stream` stays bytes.
 */

export interface MediaType {
  /** `type/subtype`, lower-case, without parameters. */
  essence: string;
  /** True when the header did not say and `essence` was sniffed from the body. */
  sniffed: boolean;
}

/** Types that mean "the server does not know"; the standard sniffs these like a missing header. */
const UNKNOWN = new Set(['unknown/unknown', 'application/unknown', '*/*']);

/** The lower-case `type/subtype` of a Content-Type value, or null when it has none. */
export function essenceOf(contentType: string | null | undefined): string | null {
  if (contentType == null) return null;
  const semicolon = contentType.indexOf(';');
  const essence = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(essence) ? essence : null;
}

/** The media type to treat a body as: the declared one, else a sniffed one. */
export function mediaTypeOf(contentType: string | null | undefined, body: Uint8Array): MediaType {
  const declared = essenceOf(contentType);
  if (declared !== null && !UNKNOWN.has(declared)) return { essence: declared, sniffed: false };
  return { essence: sniffMediaType(body), sniffed: true };
}

/** HTML and XHTML: the types whose links are extracted. */
export function isHtmlMediaType(essence: string): boolean {
  return essence === 'text/html' || essence === 'application/xhtml+xml';
}

/** XML-based types, whose charset an XML declaration may give. */
export function isXmlMediaType(essence: string): boolean {
  return essence === 'text/xml' || essence === 'application/xml' || essence.endsWith('+xml');
}

/** Types whose body is text, stored decoded; everything else is stored as the raw bytes. */
export function isTextualMediaType(essence: string): boolean {
  return (
    essence.startsWith('text/') ||
    isXmlMediaType(essence) ||
    essence === 'application/json' ||
    essence.endsWith('+json') ||
    essence === 'application/javascript' ||
    essence === 'application/x-javascript' ||
    essence === 'application/ecmascript'
  );
}

/** Tag names whose opening (`<name` then space or `>`) marks a body as HTML, per the standard. */
const HTML_TAGS = [
  '!doctype html',
  'html',
  'head',
  'script',
  'iframe',
  'h1',
  'div',
  'font',
  'table',
  'a',
  'style',
  'title',
  'b',
  'body',
  'br',
  'p',
];

/** Byte signatures: [type, bytes (-1 = any byte)]. */
const SIGNATURES: readonly (readonly [string, readonly number[]])[] = [
  ['application/pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]], // %PDF-
  ['application/postscript', [0x25, 0x21, 0x50, 0x53, 0x2d, 0x41, 0x64, 0x6f, 0x62, 0x65, 0x2d]],
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]], // GIF87a
  ['image/gif', [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]], // GIF89a
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/webp', [0x52, 0x49, 0x46, 0x46, -1, -1, -1, -1, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50]],
  ['image/bmp', [0x42, 0x4d]],
  ['image/x-icon', [0x00, 0x00, 0x01, 0x00]],
  ['application/x-gzip', [0x1f, 0x8b, 0x08]],
  ['application/zip', [0x50, 0x4b, 0x03, 0x04]],
  ['application/x-rar-compressed', [0x52, 0x61, 0x72, 0x20, 0x1a, 0x07, 0x00]],
  ['font/woff', [0x77, 0x4f, 0x46, 0x46]],
  ['font/woff2', [0x77, 0x4f, 0x46, 0x32]],
];

/** How many bytes the standard looks at. */
const SNIFF_BYTES = 1445;

function isWhitespaceByte(b: number): boolean {
  return b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;
}

function isBinaryDataByte(b: number): boolean {
  return b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
}

function startsWith(body: Uint8Array, at: number, pattern: readonly number[]): boolean {
  if (body.length - at < pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as number;
    if (want !== -1 && body[at + i] !== want) return false;
  }
  return true;
}

/** Case-insensitive ASCII match of `text` (lower-case) at `at`. */
function startsWithText(body: Uint8Array, at: number, text: string): boolean {
  if (body.length - at < text.length) return false;
  for (let i = 0; i < text.length; i++) {
    const b = body[at + i] as number;
    const lower = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
    if (lower !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** The sniffed type of a body whose server did not say: HTML, XML, PDF, an image, text or bytes. */
export function sniffMediaType(body: Uint8Array): string {
  // Unlike the standard (which says text/plain), a UTF-8 BOM does not hide the markup after it: an
  // untyped page that starts with a BOM and `<html>` is HTML in practice, and its links count.
  let at = startsWith(body, 0, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (at < body.length && at < SNIFF_BYTES && isWhitespaceByte(body[at] as number)) at++;
  if (body[at] === 0x3c) {
    for (const tag of HTML_TAGS) {
      const end = at + 1 + tag.length;
      if (startsWithText(body, at + 1, tag) && (body[end] === 0x20 || body[end] === 0x3e)) return 'text/html';
    }
    if (startsWithText(body, at, '<!--')) return 'text/html';
    if (startsWithText(body, at, '<?xml')) return 'text/xml';
  }
  // Byte order marks say text, before any binary signature.
  if (startsWith(body, 0, [0xfe, 0xff]) || startsWith(body, 0, [0xff, 0xfe])) return 'text/plain';
  if (startsWith(body, 0, [0xef, 0xbb, 0xbf])) return 'text/plain';
  for (const [type, signature] of SIGNATURES) if (startsWith(body, 0, signature)) return type;
  const end = Math.min(body.length, SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (isBinaryDataByte(body[i] as number)) return 'application/octet-stream';
  return 'text/plain';
}
