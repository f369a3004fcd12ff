/**
 * Every code a page record's `error.code` can hold, with what it means and whether the retry tiers
 * apply. The one place these facts live: the fetcher and the renderer take `retriable` from here,
 * the scheduler's retry policy reads it here (whatever a crawler says), and docs/error-codes.md is
 * generated from it (`npm run docs:generate`). `HTTP_<status>` is a family: see httpStatusCode.
 */
export interface PageErrorSpec {
  /** Trying again can help: the retry tiers apply (at once, after the retry delay, then final). */
  retriable: boolean;
  /** Where it comes from, for the docs' grouping. */
  source: 'fetch' | 'proxy' | 'render' | 'robots' | 'sitemap' | 'parse' | 'scheduler';
  meaning: string;
}

export const PAGE_ERROR_CODES = {
  TIMEOUT: {
    retriable: true,
    source: 'fetch',
    meaning: 'the connect, first-byte, silence or total time limit passed',
  },
  CONNECTION_REFUSED: { retriable: true, source: 'fetch', meaning: 'the server refused the connection' },
  CONNECTION_RESET: {
    retriable: true,
    source: 'fetch',
    meaning: 'the server reset the connection (or hung up mid-request)',
  },
  CONNECTION_ABORTED: { retriable: true, source: 'fetch', meaning: 'the connection was aborted' },
  EMPTY_RESPONSE: {
    retriable: true,
    source: 'fetch',
    meaning: 'the server closed the connection without sending any response',
  },
  HOST_UNREACHABLE: { retriable: true, source: 'fetch', meaning: 'no route to the host' },
  NETWORK_UNREACHABLE: { retriable: true, source: 'fetch', meaning: 'the network is unreachable' },
  DNS_NOT_FOUND: { retriable: true, source: 'fetch', meaning: 'the host name does not resolve' },
  DNS_FAILURE: { retriable: true, source: 'fetch', meaning: 'name resolution failed for now' },
  ADDRESS_BLOCKED: {
    retriable: false,
    source: 'fetch',
    meaning:
      'the host or a redirect led to a private, loopback or link-local address; private addresses are refused and no allow-list entry matched',
  },
  TOO_MANY_REDIRECTS: {
    retriable: false,
    source: 'fetch',
    meaning: 'more redirects than allowed, or a loop',
  },
  REDIRECT_WAIT_OVER_TIMEOUT: {
    retriable: false,
    source: 'fetch',
    meaning:
      "a redirect back to the page's host would have had to wait for the host's delay past the fetch's total time limit (raise `totalTimeoutMs`, or lower the host's delay)",
  },
  UNSUPPORTED_REDIRECT: { retriable: false, source: 'fetch', meaning: 'a redirect to a non-http(s) URL' },
  BAD_REDIRECT: {
    retriable: false,
    source: 'fetch',
    meaning: 'a redirect whose Location is not a URL, or a URL longer than 8,192 characters',
  },
  REDIRECT_WITHOUT_LOCATION: {
    retriable: false,
    source: 'fetch',
    meaning: 'a 3xx status without a usable Location header',
  },
  BODY_TOO_LARGE: {
    retriable: false,
    source: 'fetch',
    meaning: 'the body is over the cap after decompression (a gzip bomb ends here too)',
  },
  BAD_CONTENT_ENCODING: {
    retriable: false,
    source: 'fetch',
    meaning: 'the compressed body could not be decoded',
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    retriable: false,
    source: 'fetch',
    meaning: 'a Content-Encoding other than gzip, deflate, br (or zstd), or several stacked',
  },
  BAD_HTTP_RESPONSE: {
    retriable: false,
    source: 'fetch',
    meaning: 'the response is not valid HTTP (bad status line, conflicting lengths, oversized head, …)',
  },
  TLS_ERROR: { retriable: false, source: 'fetch', meaning: 'certificate or TLS handshake failure' },
  FETCH_FAILED: { retriable: true, source: 'fetch', meaning: 'any other fetch error' },
  PROXY_CONNECT_FAILED: {
    retriable: true,
    source: 'proxy',
    meaning: 'every proxy tried (up to three) could not be reached',
  },
  PROXY_TIMEOUT: {
    retriable: true,
    source: 'proxy',
    meaning: 'every proxy tried did not finish its handshake in time',
  },
  PROXY_HANDSHAKE_FAILED: {
    retriable: true,
    source: 'proxy',
    meaning: 'every proxy tried failed its TLS, CONNECT or SOCKS handshake',
  },
  PROXY_AUTH_FAILED: {
    retriable: true,
    source: 'proxy',
    meaning: 'every proxy tried refused its credentials (407 or SOCKS auth)',
  },
  NO_HEALTHY_PROXY: {
    retriable: true,
    source: 'proxy',
    meaning: 'every proxy is retired after repeated failures; retried after the next probe is due',
  },
  RENDER_TIMEOUT: {
    retriable: true,
    source: 'render',
    meaning: 'a rendered page did not load (or could not be read) within the total time limit',
  },
  RENDER_FAILED: {
    retriable: true,
    source: 'render',
    meaning: 'the browser failed: it could not start, crashed, or reported an error of its own',
  },
  RENDER_UNAVAILABLE: {
    retriable: true,
    source: 'render',
    meaning: 'a crawler without the render capability was sent a render task (a version mismatch)',
  },
  RENDER_NOT_A_PAGE: {
    retriable: false,
    source: 'render',
    meaning: 'internal: the render target is a download; the crawler fetches it instead',
  },
  ROBOTS_DENIED: {
    retriable: false,
    source: 'robots',
    meaning: 'robots.txt disallows the URL; never fetched. The message names the line',
  },
  ROBOTS_UNAVAILABLE: {
    retriable: true,
    source: 'robots',
    meaning: "the host's robots.txt kept failing (5xx, 429, network), so the page was not fetched",
  },
  SITEMAP_INVALID: {
    retriable: false,
    source: 'sitemap',
    meaning: "a sitemap task's body is not a sitemap (no <urlset>/<sitemapindex>, or broken gzip)",
  },
  PARSE_FAILED: { retriable: false, source: 'parse', meaning: 'link extraction failed' },
  CRAWLER_CRASHED: {
    retriable: false,
    source: 'scheduler',
    meaning:
      'four crawler processes died (killed, crashed, hung) while working on it (the third death counts an attempt); it is not tried again',
  },
  RECORD_UNWRITABLE: {
    retriable: false,
    source: 'scheduler',
    meaning: "the page sink refused the crawler's record for good; the URLs it discovered are still queued",
  },
  CRAWLER_ERROR: {
    retriable: true,
    source: 'fetch',
    meaning: 'the crawler failed on this task in a way it did not expect (a bug); the task is retried',
  },
  RECORD_TOO_LARGE: {
    retriable: false,
    source: 'fetch',
    meaning:
      "the page's record would not fit in one WebSocket message even with its body as base64 (links or entries beyond the frame limit); recorded without body or links",
  },
  UNKNOWN: {
    retriable: false,
    source: 'scheduler',
    meaning: 'a crawler reported a failure without a reason',
  },
} as const satisfies Record<string, PageErrorSpec>;

/** A catalogued code, or `HTTP_<status>` for a response status that is not a usable page. */
export type PageErrorCode = keyof typeof PAGE_ERROR_CODES | `HTTP_${number}`;

const HTTP_CODE = /^HTTP_(\d{3})$/;

/** `HTTP_<status>` for a status that is not a page; 5xx and 429 are retried, other statuses not. */
export function httpStatusCode(status: number): `HTTP_${number}` {
  return `HTTP_${status}`;
}

/** The catalogue's entry for a code; undefined for a code it does not know (an older crawler's). */
export function pageErrorSpec(code: string): PageErrorSpec | undefined {
  const http = HTTP_CODE.exec(code);
  if (http) {
    const status = Number(http[1]);
    return {
      retriable: status === 429 || status >= 500,
      source: 'fetch',
      meaning: 'the server answered with that status',
    };
  }
  return Object.hasOwn(PAGE_ERROR_CODES, code)
    ? (PAGE_ERROR_CODES as Record<string, PageErrorSpec>)[code]
    : undefined;
}

/** Whether the retry tiers apply to `code`; `fallback` for a code the catalogue does not know. */
export function isRetriablePageError(code: string, fallback: boolean): boolean {
  return pageErrorSpec(code)?.retriable ?? fallback;
}
