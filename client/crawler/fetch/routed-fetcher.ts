import type { Logger } from '../../../shared/logger.js';
import { hostOf } from '../../../shared/url/normalize.js';
import type { Agents } from './agents.js';
import { FetchError, toFetchError } from './fetch-error.js';
import type { FetchedPage, Fetcher, FetchHooks } from './fetcher.js';
import { ProxyFailure } from './proxy-agents.js';
import type { ProxyPool } from './proxy-pool.js';

/** How a request went out: the User-Agent it sent and the proxy that carried it (redacted). */
export interface FetchVia {
  userAgent: string;
  proxy: string | null;
}

export type RoutedPage = FetchedPage & { via: FetchVia };

/** A failed fetch, with the User-Agent and proxy of its last try. */
export class RoutedFetchError extends FetchError {
  constructor(
    failure: FetchError,
    readonly via: FetchVia,
  ) {
    super(failure.code, failure.message, {
      status: failure.httpStatus,
      retryAfterMs: failure.retryAfterMs,
      cause: failure,
    });
  }
}

export interface RoutedFetcherOptions {
  fetcher: Fetcher;
  userAgent: () => string;
  /** Null: requests go direct. */
  pool: ProxyPool | null;
  agentsFor: (proxyUrl: string) => Agents;
  /** Proxies one request may try when proxies fail before reaching the target (default 3). */
  maxProxyTries?: number;
  logger?: Logger;
}

/**
 * The innermost FetchError in the cause chain: an error the proxy agents raised (ProxyFailure,
 * ADDRESS_BLOCKED) reaches here wrapped by got and then by the fetcher's generic mapping.
 */
function unwrap(err: unknown): FetchError {
  let found: FetchError | null = null;
  let cursor: unknown = err;
  for (let depth = 0; depth < 6 && cursor; depth++) {
    if (cursor instanceof FetchError) found = cursor;
    cursor = (cursor as { cause?: unknown }).cause;
  }
  return found ?? toFetchError(err);
}

/**
 * The crawler's fetch with identity and route: picks the User-Agent, and with proxies the host's
 * sticky proxy. A request the proxy failed before it reached the target (refused, unreachable,
 * handshake, 407) is sent at once through the host's next proxy, up to `maxProxyTries`, and the
 * failure is reported to the pool; so a dead proxy costs time, not pages. Only when no proxy is
 * usable does the fetch fail, retriably: `NO_HEALTHY_PROXY` (retry after the next probe is due).
 */
export class RoutedFetcher {
  constructor(private readonly options: RoutedFetcherOptions) {}

  /**
   * `onRequestSent` runs each time the request's head is written: through the next proxy after one
   * failed, or once more after a stale socket (a refused proxy writes none). The scheduler counts
   * the host's delay from the last, the one that reached the host.
   */
  async fetch(url: string, hooks: FetchHooks = {}): Promise<RoutedPage> {
    const userAgent = this.options.userAgent();
    const report = {
      ...(hooks.onRequestSent ? { onRequestSent: hooks.onRequestSent } : {}),
      ...(hooks.awaitHop ? { awaitHop: hooks.awaitHop } : {}),
      ...(hooks.stayOnHost ? { stayOnHost: true } : {}),
      // Per-fetch body limits (sitemaps, robots.txt) pass through to every try.
      ...(hooks.maxBodyBytes !== undefined ? { maxBodyBytes: hooks.maxBodyBytes } : {}),
      ...(hooks.truncate ? { truncate: true } : {}),
      ...(hooks.resendOnStaleSocket === false ? { resendOnStaleSocket: false } : {}),
      ...(hooks.headers ? { headers: hooks.headers } : {}),
      ...(hooks.cookies ? { cookies: hooks.cookies } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
    };
    const { pool, fetcher } = this.options;
    if (!pool || pool.size === 0) {
      const via = { userAgent, proxy: null };
      try {
        return { ...(await fetcher.fetch(url, { userAgent, ...report })), via };
      } catch (err) {
        throw new RoutedFetchError(unwrap(err), via);
      }
    }
    let host: string;
    try {
      host = hostOf(url);
    } catch (err) {
      throw new RoutedFetchError(toFetchError(err), { userAgent, proxy: null });
    }
    const tried = new Set<string>();
    let last: RoutedFetchError | null = null;
    const maxTries = this.options.maxProxyTries ?? 3;
    while (tried.size < maxTries) {
      const pick = pool.candidates(host, tried).find((candidate) => pool.claim(candidate.url));
      if (!pick) break;
      tried.add(pick.url);
      const via = { userAgent, proxy: pick.label };
      let page: FetchedPage;
      try {
        page = await fetcher.fetch(url, { userAgent, agents: this.options.agentsFor(pick.url), ...report });
      } catch (err) {
        const failure = unwrap(err);
        if (failure instanceof ProxyFailure) {
          pool.report(pick.url, 'proxy-failure');
          this.options.logger?.debug(
            { proxy: pick.label, code: failure.code, url },
            'proxy failed; next one',
          );
          last = new RoutedFetchError(failure, via);
          continue;
        }
        pool.report(pick.url, 'unclear');
        throw new RoutedFetchError(failure, via);
      }
      if (page.status === 407) {
        pool.report(pick.url, 'proxy-failure');
        last = new RoutedFetchError(
          new ProxyFailure(
            'PROXY_AUTH_FAILED',
            `proxy ${pick.label} answered 407: proxy authentication required`,
          ),
          via,
        );
        continue;
      }
      pool.report(pick.url, 'ok');
      return { ...page, via };
    }
    if (last) throw last;
    const waitMs = pool.nextProbeInMs();
    throw new RoutedFetchError(
      new FetchError(
        'NO_HEALTHY_PROXY',
        `every proxy (${pool.size}) is retired after repeated failures; the next may be probed in ${waitMs ?? 0} ms`,
        { retryAfterMs: waitMs },
      ),
      { userAgent, proxy: null },
    );
  }
}
