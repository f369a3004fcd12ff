/**
 * The URL of a `<meta http-equiv="refresh" content="5; url=/next">`, parsed by the HTML standard's
 * shared declarative refresh steps (https://html.spec.whatwg.org/multipage/semantics.html#shared-declarative-refresh-steps):
 * a time (digits and dots), then `;` or `,` or whitespace, then optionally `url=` (any case, spaces
 * around `=`), then the URL, optionally quoted (a quote ends it). Returns the URL as written, to be
 * resolved like an href, or null when the content is invalid or refreshes the page itself (no URL).
 */
export function refreshTarget(content: string): string | null {
  const length = content.length;
  let at = skipWhitespace(content, 0);
  const timeStart = at;
  while (at < length && isDigit(content.charCodeAt(at))) at++;
  if (at === timeStart && content.charCodeAt(at) !== 0x2e /* . */) return null;
  while (at < length && (isDigit(content.charCodeAt(at)) || content.charCodeAt(at) === 0x2e)) at++;
  if (at >= length) return null;
  let c = content.charCodeAt(at);
  if (c !== 0x3b /* ; */ && c !== 0x2c /* , */ && !isWhitespace(c)) return null;
  at = skipWhitespace(content, at);
  c = content.charCodeAt(at);
  if (c === 0x3b || c === 0x2c) at++;
  at = skipWhitespace(content, at);
  if (at >= length) return null;

  let urlStart = at;
  if ((content.charCodeAt(at) | 0x20) === 0x75 /* u */) {
    at++;
    if (
      (content.charCodeAt(at) | 0x20) === 0x72 /* r */ &&
      (content.charCodeAt(at + 1) | 0x20) === 0x6c /* l */
    ) {
      at = skipWhitespace(content, at + 2);
      if (content.charCodeAt(at) === 0x3d /* = */) {
        at = skipWhitespace(content, at + 1);
        urlStart = at;
      }
    }
  }
  let url = content.slice(urlStart);
  const quote = url.charCodeAt(0);
  if (quote === 0x22 || quote === 0x27) {
    url = url.slice(1);
    const close = url.indexOf(String.fromCharCode(quote));
    if (close !== -1) url = url.slice(0, close);
  }
  return url;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** ASCII whitespace: tab, LF, FF, CR, space. */
function isWhitespace(c: number): boolean {
  return c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20;
}

function skipWhitespace(text: string, at: number): number {
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}
