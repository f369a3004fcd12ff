import zlib from 'node:zlib';
import got, { type BeforeRedirectHook, type ExtendOptions, type Got } from 'got';
import type { FetchSettings } from '../../../shared/protocol/messages.js';
import type { Agents } from './agents.js';
import { httpStatusCode } from '../../../shared/error-codes/index.js';
import { FetchError, parseRetryAfter, taskWithdrawn, toFetchError } from './fetch-error.js';
import { HopDenied, RedirectSpacing, type HopAnswer } from './redirect-spacing.js';
import { staysOnHost } from './redirect-target.js';
import { TaskCookies } from './task-cookies.js';
import { RunHeaders } from './request-headers.js';
import { wireOfFixed } from '../../../shared/protocol/fixed-cookies.js';
import type { WireCookie } from '../../../shared/protocol/wire-cookie.js';

export interface FetchedPage {
  status: number;
  finalUrl: string;
  redirects: string[];
  headers: Record<string, string>;
  contentType: string | null;
  /** Decompressed body, at most maxBodyBytes. */
  body: Buffer;
  /** The body is a browser's DOM serialisation (UTF-8), not the bytes the server sent. */
  rendered?: boolean;
  /**
   * The cookies the responses of the fetch set (its redirects included), when any did: the browser
   * that renders the page gets them. Never recorded.
   */
  cookies?: TaskCookies | undefined;
  /**
   * A rendered page only: where its script or meta refresh navigated the browser (refused there,
   * so the DOM is this page's), in order, as the browser resolved them.
   */
  navigations?: string[];
}

const WATCHDOG_GRACE_MS = 2_000;

/**
 * The page as one literal, not `{ ...meta, body }`: on Node 20 a property written after a spread is
 * defined through V8's runtime, once per page (docs/capacity.md, "Properties after a spread").
 */
function pageOf(meta: Omit<FetchedPage, 'body'>, body: Buffer, cookies: TaskCookies): FetchedPage {
  return {
    status: meta.status,
    finalUrl: meta.finalUrl,
    redirects: meta.redirects,
    headers: meta.headers,
    contentType: meta.contentType,
    body,
    // A session's jar always goes on (a rendering browser may add to it); otherwise only a live one.
    cookies: cookies.empty && !cookies.changed && !cookies.session ? undefined : cookies,
  };
}

/**
 * The codings got decodes (decompress-response: one coding, exactly as named; zstd where this
 * Node has it). Any other Content-Encoding would reach the record still encoded, read as text.
 */
const DECODED_ENCODINGS = new Set(['', 'identity', 'gzip', 'deflate', 'br']);
if ('createZstdDecompress' in zlib) DECODED_ENCODINGS.add('zstd');

const KEPT_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'last-modified',
  'etag',
  'location',
  'retry-after',
  'x-robots-tag',
  'server',
  'date',
];

/** The response headers a record keeps (names lower-case). */
export function keptHeaders(all: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = all[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Per-request options: identity and route (another User-Agent, agents through a proxy). */
export interface FetchRoute {
  userAgent?: string;
  agents?: Agents;
  /**
   * Runs when the request's head is written to the socket, and again each time it is written once
   * more (a stale kept-alive socket) and for each redirect back to the same host: the host's delay
   * runs from the last write that reached it.
   */
  onRequestSent?: () => void;
  /**
   * A redirect back to the URL's host waits for this: the scheduler's answer (redirect-spacing.ts).
   * Denied, the fetch ends with the redirect response.
   */
  awaitHop?: (url: string) => Promise<HopAnswer>;
  /**
   * A redirect to another host is not followed: the fetch ends with the 3xx response, whose Location
   * the crawl queues as a link (redirect-target.ts). A page's fetch sets it; robots.txt and sitemaps
   * follow every redirect.
   */
  stayOnHost?: boolean;
  /** Overrides the body cap for this fetch (sitemaps, robots.txt). */
  maxBodyBytes?: number;
  /** A body over the cap is cut at it and the fetch succeeds (robots.txt: the first 500 KiB count). */
  truncate?: boolean;
  /**
   * False: a reset on a kept-alive socket is not sent again on a fresh one (the task's previous
   * attempt was reset already: the server resets this URL, the socket was not stale).
   */
  resendOnStaleSocket?: boolean;
  /** Request headers for this fetch only (a recrawl's `If-None-Match` / `If-Modified-Since`). */
  headers?: Record<string, string>;
  /** The host's session (a run with `sessionCookies`): the fetch's jar starts with these. */
  cookies?: readonly WireCookie[];
  /**
   * Aborted: the fetch stops at once (its socket is destroyed) and fails with
   * `CONNECTION_ABORTED`. The crawler aborts a task's fetch when the connection that brought the
   * task ends: the scheduler has handed the task back.
   */
  signal?: AbortSignal;
}

/** What a caller above the fetcher sets per fetch (the routed fetcher adds the route itself). */
export type FetchHooks = Pick<
  FetchRoute,
  | 'onRequestSent'
  | 'awaitHop'
  | 'stayOnHost'
  | 'maxBodyBytes'
  | 'truncate'
  | 'resendOnStaleSocket'
  | 'headers'
  | 'cookies'
  | 'signal'
>;

/**
 * got's options for a crawl's fetches (one place, so `npm run bench -- --http-client` measures
 * the crawler's own): its timeouts, no retries of got's own (the scheduler owns retries), the
 * redirect cap, decompression, and the crawl's identity.
 */
export function crawlerGotOptions(settings: FetchSettings, agents: Agents): ExtendOptions {
  return {
    agent: { http: agents.http, https: agents.https },
    timeout: {
      connect: settings.connectTimeoutMs,
      response: settings.responseTimeoutMs,
      request: settings.totalTimeoutMs,
      // No byte for this long, at any point, ends the request: a server that sends its headers
      // and then goes silent fails well before the total limit.
      socket: Math.max(settings.connectTimeoutMs, settings.responseTimeoutMs),
    },
    retry: { limit: 0 },
    followRedirect: true,
    maxRedirects: settings.maxRedirects,
    decompress: true,
    throwHttpErrors: false,
    // A cookie the jar refuses is dropped (TaskCookies drops them itself; this says so to got).
    ignoreInvalidCookies: true,
    http2: false,
    headers: {
      'user-agent': settings.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip, deflate, br',
    },
  };
}

/** URLs whose server reset a request on a fresh socket, remembered by this many at most. */
const RESET_MEMORY = 10_000;

/**
 * got with the crawler's limits: timeouts (connect, first byte, total, and silence mid-body), a
 * redirect cap, and a cap on decompressed body bytes, so a 50 MB body, an endless body or a gzip,
 * deflate or brotli bomb ends as BODY_TOO_LARGE rather than as memory. got's own retries are off:
 * the scheduler owns retries. docs/hostile-servers.md lists how each kind of hostile server ends.
 */
export class Fetcher {
  private readonly client: Got;
  /** The run's own request headers (`headers`), or null when it sets none. */
  private readonly runHeaders: RunHeaders | null;
  /** The run's own cookies (`cookies`), which every fetch's jar starts with. */
  private readonly fixedCookies: readonly WireCookie[];
  /** URLs reset on a fresh socket: the server resets them, so a reset is never sent again. */
  private readonly resetting = new Set<string>();

  constructor(
    private readonly settings: FetchSettings,
    agents: Agents,
  ) {
    this.client = got.extend(crawlerGotOptions(settings, agents));
    this.runHeaders = RunHeaders.of(settings.headers);
    this.fixedCookies = (settings.cookies ?? []).map(wireOfFixed);
  }

  /**
   * A request written on a kept-alive socket that the server had closed (it answered without
   * `Connection: close` and hung up) fails with a reset before any response; it never reached the
   * server, so it is sent once more, on a fresh socket, instead of costing the page an attempt. A
   * host's first pages follow its robots.txt at once, on such a socket.
   *
   * A server that resets the URL itself looks the same on a reused socket. So a URL is sent again
   * at most once, and never once it was reset on a fresh socket (remembered here) or when its
   * task's previous attempt was reset (`resendOnStaleSocket: false`): after its first reset, a URL
   * costs at most one request per attempt.
   */
  fetch(url: string, route: FetchRoute = {}): Promise<FetchedPage> {
    return this.fetchOnce(url, route, route.resendOnStaleSocket !== false && !this.resetting.has(url));
  }

  private remember(url: string): void {
    if (this.resetting.has(url)) return;
    if (this.resetting.size >= RESET_MEMORY) {
      const oldest = this.resetting.values().next().value;
      if (oldest !== undefined) this.resetting.delete(oldest);
    }
    this.resetting.add(url);
  }

  private fetchOnce(url: string, route: FetchRoute, retryStaleSocket: boolean): Promise<FetchedPage> {
    const max = route.maxBodyBytes ?? this.settings.maxBodyBytes;
    const { signal } = route;
    if (signal?.aborted) return Promise.reject(taskWithdrawn());
    return new Promise<FetchedPage>((resolveFetch, rejectFetch) => {
      const onAbort = (): void => fail(taskWithdrawn());
      const resolve = (page: FetchedPage): void => {
        signal?.removeEventListener('abort', onAbort);
        resolveFetch(page);
      };
      const reject = (err: unknown): void => {
        signal?.removeEventListener('abort', onAbort);
        rejectFetch(err);
      };
      const { onRequestSent } = route;
      const spacing =
        onRequestSent || route.awaitHop
          ? new RedirectSpacing({
              url,
              awaitGrant: route.awaitHop,
              deadline: Date.now() + this.settings.totalTimeoutMs,
              signal,
            })
          : null;
      // Cookies live for this fetch (from the host's session, if the run keeps one): a redirect that
      // sets one gets it back on the next hop.
      const cookies = new TaskCookies(route.cookies, this.fixedCookies);
      const { runHeaders } = this;
      // The run's own headers, for the URL's host (a bad URL gets none: got reports it).
      const own = runHeaders ? runHeadersFor(runHeaders, url) : null;
      const beforeRedirect: BeforeRedirectHook[] = [];
      if (runHeaders) beforeRedirect.push((next) => runHeaders.redirect(next.headers, next.url as URL));
      if (spacing) {
        beforeRedirect.push((next, response) =>
          spacing.beforeHop(next.url as URL, {
            status: response.statusCode,
            url: response.url,
            headers: response.headers,
            redirects: followedBefore(response.redirectUrls, next.url as URL),
          }),
        );
      }
      const stream = this.client.stream(url, {
        cookieJar: cookies,
        ...(route.agents ? { agent: { http: route.agents.http, https: route.agents.https } } : {}),
        ...(route.userAgent || route.headers || own
          ? {
              headers: {
                ...own,
                ...route.headers,
                ...(route.userAgent ? { 'user-agent': route.userAgent } : {}),
              },
            }
          : {}),
        ...(route.stayOnHost ? { followRedirect: staysOnHost(url) } : {}),
        ...(beforeRedirect.length > 0 ? { hooks: { beforeRedirect } } : {}),
      });
      let reusedSocket: boolean | null = null;
      stream.on('request', (request: import('node:http').ClientRequest) => {
        const first = reusedSocket === null;
        if (first) reusedSocket = request.reusedSocket;
        // The first request goes to the URL's host; a redirect's, to wherever got is sent now.
        if (!spacing || !(first || spacing.isOwnHost(stream.options.url as URL))) return;
        if (onRequestSent) request.once('finish', onRequestSent);
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let meta: Omit<FetchedPage, 'body'> | null = null;
      let settled = false;
      // got's own total timeout should always fire first; this only guards against a stream that
      // neither ends nor errors (a hang would hold a crawl slot and a host slot forever).
      const watchdog = setTimeout(() => {
        fail(new FetchError('TIMEOUT', `no end after ${this.settings.totalTimeoutMs} ms (watchdog)`));
      }, this.settings.totalTimeoutMs + WATCHDOG_GRACE_MS);
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        stream.destroy();
        const denied = hopDeniedIn(err);
        if (denied) {
          // robots.txt disallows the hop: the fetch ends with the redirect (its body unread).
          const headers = keptHeaders(denied.headers);
          const page = {
            status: denied.status,
            finalUrl: denied.url,
            redirects: denied.redirects,
            headers,
            contentType: headers['content-type'] ?? null,
          };
          resolve(pageOf(page, Buffer.alloc(0), cookies));
          return;
        }
        const error = toFetchError(err);
        if (!meta && error.code === 'CONNECTION_RESET') {
          if (retryStaleSocket && reusedSocket) {
            this.fetchOnce(url, route, false).then(resolve, reject);
            return;
          }
          // On a fresh socket, or once more after a resend, the reset is the server's answer to this URL.
          this.remember(url);
        }
        reject(error);
      };
      stream.on(
        'response',
        (response: {
          statusCode: number;
          url: string;
          redirectUrls: URL[];
          headers: Record<string, string | string[] | undefined>;
        }) => {
          const headers = keptHeaders(response.headers);
          const encoding = (headers['content-encoding'] ?? '').trim().toLowerCase();
          if (!DECODED_ENCODINGS.has(encoding)) {
            fail(
              new FetchError(
                'UNSUPPORTED_CONTENT_ENCODING',
                `Content-Encoding '${encoding.slice(0, 100)}' cannot be decoded`,
                { status: response.statusCode },
              ),
            );
            return;
          }
          const declared = Number(headers['content-length']);
          if (
            !route.truncate &&
            !headers['content-encoding'] &&
            Number.isFinite(declared) &&
            declared > max
          ) {
            fail(
              new FetchError('BODY_TOO_LARGE', `declared ${declared} bytes, over the ${max}-byte cap`, {
                status: response.statusCode,
              }),
            );
            return;
          }
          meta = {
            status: response.statusCode,
            finalUrl: response.url,
            redirects: response.redirectUrls.map(String),
            headers,
            contentType: headers['content-type'] ?? null,
          };
        },
      );
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > max && route.truncate && meta) {
          chunks.push(chunk.subarray(0, chunk.length - (size - max)));
          settled = true;
          stream.destroy();
          resolve(pageOf(meta, Buffer.concat(chunks, max), cookies));
          return;
        }
        if (size > max) {
          fail(
            new FetchError('BODY_TOO_LARGE', `body over the ${max}-byte cap (after decompression)`, {
              status: meta?.status ?? null,
            }),
          );
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      stream.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        if (!meta) {
          reject(new FetchError('EMPTY_RESPONSE', 'the server closed the connection without a response'));
          return;
        }
        resolve(
          pageOf(meta, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), cookies),
        );
      });
    });
  }
}

/**
 * The hops a chain followed before `next`: got has already added `next` to its list (the one the
 * response shares) when its beforeRedirect hooks run.
 */
function followedBefore(redirectUrls: readonly URL[], next: URL): string[] {
  const hrefs = redirectUrls.map(String);
  return hrefs[hrefs.length - 1] === next.href ? hrefs.slice(0, -1) : hrefs;
}

/** The denied hop that ended a fetch (got wraps what its hook threw), or null. */
function hopDeniedIn(err: unknown): HopDenied['stoppedAt'] | null {
  if (err instanceof HopDenied) return err.stoppedAt;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof HopDenied ? cause.stoppedAt : null;
}

/** A response status that is not a usable page, as a typed failure (null for 2xx). */
export function statusFailure(page: FetchedPage): FetchError | null {
  const { status } = page;
  if (status >= 200 && status < 300) return null;
  const retryAfterMs = parseRetryAfter(page.headers['retry-after']);
  const code = status >= 300 && status < 400 ? 'REDIRECT_WITHOUT_LOCATION' : httpStatusCode(status);
  return new FetchError(code, `HTTP ${status}`, { status, retryAfterMs });
}

function runHeadersFor(headers: RunHeaders, url: string): Readonly<Record<string, string>> | null {
  try {
    return headers.forUrl(new URL(url));
  } catch {
    return null;
  }
}
