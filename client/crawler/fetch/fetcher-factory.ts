import type { Logger } from '../../../shared/logger.js';
import type { FetchSettings } from '../../../shared/protocol/messages.js';
import { createAgents, type Agents } from './agents.js';
import { Fetcher } from './fetcher.js';
import { createProxyAgents } from './proxy-agents.js';
import { ProxyPool } from './proxy-pool.js';
import { RoutedFetcher } from './routed-fetcher.js';
import type { LookupAll } from './target-guard.js';
import { createUserAgentRotation } from './user-agents.js';

export const DEFAULT_PROXY_MAX_FAILURES = 3;
export const DEFAULT_PROXY_COOLOFF_MS = 60_000;

export interface FetcherFactoryDeps {
  maxSockets: number;
  logger: Logger;
  clock?: () => number;
  lookup?: LookupAll;
}

/** Distinct fetch settings (runs) a crawler keeps a fetcher for; the least recently used go first. */
export const MAX_CACHED_FETCHERS = 16;

/**
 * The fetcher for a run's fetch settings (many runs share a crawler, each with its own user agents,
 * proxies and limits), kept per distinct settings for the last MAX_CACHED_FETCHERS of them. A proxy
 * pool (and what it learned about each proxy's health) and the proxies' connections are shared by
 * every fetcher with the same proxy list and tuning.
 */
export function createFetcherFactory(deps: FetcherFactoryDeps): (settings: FetchSettings) => RoutedFetcher {
  const fetchers = new LruMap<RoutedFetcher>(MAX_CACHED_FETCHERS);
  const pools = new LruMap<ProxyPool | null>(MAX_CACHED_FETCHERS);
  const proxyAgents = new LruMap<Map<string, Agents>>(MAX_CACHED_FETCHERS, (agents) => {
    for (const a of agents.values()) {
      a.http.destroy();
      a.https.destroy();
    }
  });
  const log = deps.logger.child({ module: 'proxies' });

  const poolFor = (settings: FetchSettings): ProxyPool | null => {
    const proxies = settings.proxies ?? [];
    const key = JSON.stringify([proxies, settings.proxyMaxFailures, settings.proxyCooloffMs]);
    return pools.getOrSet(key, () =>
      proxies.length === 0
        ? null
        : new ProxyPool({
            proxies,
            maxFailures: settings.proxyMaxFailures ?? DEFAULT_PROXY_MAX_FAILURES,
            cooloffMs: settings.proxyCooloffMs ?? DEFAULT_PROXY_COOLOFF_MS,
            ...(deps.clock ? { clock: deps.clock } : {}),
            onEvent: (event) =>
              event.type === 'retired'
                ? log.warn(event, 'proxy retired after repeated failures')
                : log.info(event, event.type === 'probing' ? 'probing a retired proxy' : 'proxy re-admitted'),
          }),
    );
  };

  const agentsFor = (settings: FetchSettings): ((proxyUrl: string) => Agents) => {
    const key = JSON.stringify([settings.proxies ?? [], settings.allowPrivate, settings.connectTimeoutMs]);
    const cache = proxyAgents.getOrSet(key, () => new Map());
    return (proxyUrl) => {
      let agents = cache.get(proxyUrl);
      if (!agents) {
        agents = createProxyAgents(proxyUrl, {
          allowPrivate: settings.allowPrivate,
          connectTimeoutMs: settings.connectTimeoutMs,
          maxSockets: deps.maxSockets,
          ...(deps.lookup ? { lookup: deps.lookup } : {}),
        });
        cache.set(proxyUrl, agents);
      }
      return agents;
    };
  };

  return (settings) =>
    fetchers.getOrSet(JSON.stringify(settings), () => {
      const direct = createAgents({
        allowPrivate: settings.allowPrivate,
        allowAddresses: settings.allowAddresses,
        maxSockets: deps.maxSockets,
      });
      return new RoutedFetcher({
        fetcher: new Fetcher(settings, direct),
        userAgent: createUserAgentRotation(settings),
        pool: poolFor(settings),
        agentsFor: agentsFor(settings),
        logger: log,
      });
    });
}

/** A small map that forgets its least recently used entry beyond `max` (calling `onEvict`). */
class LruMap<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly max: number,
    private readonly onEvict?: (value: V) => void,
  ) {}

  getOrSet(key: string, create: () => V): V {
    if (this.entries.has(key)) {
      const value = this.entries.get(key) as V;
      this.entries.delete(key);
      this.entries.set(key, value);
      return value;
    }
    const value = create();
    this.entries.set(key, value);
    if (this.entries.size > this.max) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, V];
      this.entries.delete(oldestKey);
      this.onEvict?.(oldest);
    }
    return value;
  }
}
