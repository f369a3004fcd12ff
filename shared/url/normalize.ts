import { InvalidInputError } from '../errors.js';
import { normalizePercentEncoding } from './percent-encoding.js';

/**
 * URL canonicalisation: one spelling per resource, so the frontier's "seen" check and the per-host
 * politeness state are keyed consistently.
 *
 * WHATWG URL (the parser browsers use) does most of the work: it trims leading and trailing C0 control
 * characters and spaces and drops tabs and newlines anywhere (as browsers do for `href` values), lower-
 * cases the scheme and host, converts IDN hosts to punycode, removes the default port, resolves dot
 * segments and gives an empty path as `/`. On top of that we remove the fragment (never sent to the
 * server), a `?` with an empty query and a hostname's trailing dot, and normalise percent-encoding (see
 * `percent-encoding.ts`). Query parameter order is kept: servers may treat `?a=1&b=2` and `?b=2&a=1`
 * differently. Userinfo (`user:pass@`) is kept as written: it can select a different resource, and
 * dropping it silently would be a surprise; callers that must not crawl credentials should reject it.
 */

/** Longest URL we accept, in UTF-16 code units, both as input and once normalised. */
export const MAX_URL_LENGTH = 8192;

/** Stable codes of the errors `normalizeUrl` throws (as `InvalidInputError`). */
export type UrlErrorCode = 'URL_INVALID' | 'URL_UNSUPPORTED_SCHEME' | 'URL_TOO_LONG';

/** How much of an offending input an error message quotes. */
const PREVIEW_LENGTH = 200;

/** Why `canonicalise` rejected a URL; preallocated, so rejecting allocates nothing. */
interface Rejection {
  readonly code: UrlErrorCode;
}
const REJECTED: Readonly<Record<UrlErrorCode, Rejection>> = {
  URL_INVALID: { code: 'URL_INVALID' },
  URL_UNSUPPORTED_SCHEME: { code: 'URL_UNSUPPORTED_SCHEME' },
  URL_TOO_LONG: { code: 'URL_TOO_LONG' },
};

/**
 * Returns the canonical absolute form of `input`, resolved against `base` when it is relative.
 * @throws InvalidInputError `URL_INVALID` (unparsable, or relative without a base),
 *   `URL_UNSUPPORTED_SCHEME` (anything but http: and https:), `URL_TOO_LONG` (over `MAX_URL_LENGTH`).
 */
export function normalizeUrl(input: string, base?: string): string {
  if (input.length > MAX_URL_LENGTH) throw failure('URL_TOO_LONG', input, base);
  const url = parse(input, base);
  if (url === null) throw failure('URL_INVALID', input, base);
  const result = canonicalise(url);
  if (typeof result !== 'string') throw failure(result.code, input, base);
  return result;
}

/**
 * `normalizeUrl` that answers `null` instead of throwing. This is the per-link hot path of the link
 * extractor, so it builds no error objects for the common rejections (other schemes, too long).
 */
export function tryNormalizeUrl(input: string, base?: string): string | null {
  if (input.length > MAX_URL_LENGTH) return null;
  const url = parse(input, base);
  if (url === null) return null;
  const result = canonicalise(url);
  return typeof result === 'string' ? result : null;
}

/**
 * The host key of an http(s) URL: lower-case hostname (punycode, no trailing dot) plus `:port` when the
 * port is not the scheme's default. This is the key per-host politeness state and the 'host' crawl
 * scope use; for a URL from `normalizeUrl` it equals `new URL(url).host`.
 * @throws InvalidInputError as `normalizeUrl` for unparsable URLs and other schemes.
 */
export function hostOf(url: string): string {
  const parsed = parse(url, undefined);
  if (parsed === null) throw failure('URL_INVALID', url, undefined);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw failure('URL_UNSUPPORTED_SCHEME', url, undefined);
  }
  return hostKey(parsed);
}

/** `url.host` without the hostname's trailing dots (`example.com.:81` -> `example.com:81`). */
export function hostKey(url: URL): string {
  const host = url.host;
  if (!url.hostname.endsWith('.')) return host;
  const hostname = stripTrailingDots(url.hostname);
  return url.port === '' ? hostname : `${hostname}:${url.port}`;
}

function parse(input: string, base: string | undefined): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

/** The canonical string of a parsed URL, or why it is rejected. Mutates `url`. */
function canonicalise(url: URL): string | Rejection {
  const protocol = url.protocol;
  if (protocol !== 'http:' && protocol !== 'https:') return REJECTED.URL_UNSUPPORTED_SCHEME;
  if (url.hostname.endsWith('.')) {
    // `example.com.` is the same host as `example.com` (an absolute DNS name), but a different string.
    const hostname = stripTrailingDots(url.hostname);
    if (hostname === '') return REJECTED.URL_INVALID;
    url.hostname = hostname;
  }
  let href = url.href;
  // The first '#' starts the fragment: WHATWG percent-encodes '#' in userinfo and path.
  const hashAt = href.indexOf('#');
  if (hashAt !== -1) href = href.slice(0, hashAt);
  // `search` is '' both for no query and for an empty one; only then is a trailing '?' droppable.
  if (url.search === '' && href.endsWith('?')) href = href.slice(0, -1);
  if (href.includes('%')) {
    // Path and query only: userinfo is kept as written, and an http(s) host has no escapes left.
    const pathAt = href.indexOf('/', protocol.length + 2);
    href = href.slice(0, pathAt) + normalizePercentEncoding(href.slice(pathAt));
  }
  return href.length > MAX_URL_LENGTH ? REJECTED.URL_TOO_LONG : href;
}

function stripTrailingDots(hostname: string): string {
  let end = hostname.length;
  while (end > 0 && hostname.charCodeAt(end - 1) === 0x2e) end--;
  return hostname.slice(0, end);
}

function failure(code: UrlErrorCode, input: string, base: string | undefined): InvalidInputError {
  const quoted = preview(input);
  const against = base === undefined ? '' : ` (against base ${preview(base)})`;
  const message =
    code === 'URL_TOO_LONG'
      ? `URL is longer than ${MAX_URL_LENGTH} characters: ${quoted}${against}`
      : code === 'URL_UNSUPPORTED_SCHEME'
        ? `only http: and https: URLs can be crawled: ${quoted}${against}`
        : `not a valid absolute URL: ${quoted}${against}`;
  return new InvalidInputError(code, message, { details: { input: input.slice(0, PREVIEW_LENGTH) } });
}

/** The input quoted as JSON (so control characters show), cut to `PREVIEW_LENGTH` characters. */
function preview(text: string): string {
  return text.length > PREVIEW_LENGTH
    ? `${JSON.stringify(text.slice(0, PREVIEW_LENGTH))}… (${text.length} characters)`
    : JSON.stringify(text);
}
