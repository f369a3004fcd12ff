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

/**
 * The fetcher for the scheduler's current fetch settings, rebuilt when they change. The proxy pool
 * (and what it learned about each proxy's health) and the proxies' connections are kept as long as
 * the proxy list and its tuning stay the same.
 */
export function createFetcherFactory(deps: FetcherFactoryDeps): (settings: FetchSettings) => RoutedFetcher {
  let current: { key: string; fetcher: RoutedFetcher } | null = null;
  let pool: { key: string; pool: ProxyPool | null } | null = null;
  let proxyAgents: { key: string; agents: Map<string, Agents> } | null = null;
  const log = deps.logger.child({ module: 'proxies' });

  const poolFor = (settings: FetchSettings): ProxyPool | null => {
    const proxies = settings.proxies ?? [];
    const key = JSON.stringify([proxies, settings.proxyMaxFailures, settings.proxyCooloffMs]);
    if (pool?.key !== key) {
      pool = {
        key,
        pool:
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
                    : log.info(
                        event,
                        event.type === 'probing' ? 'probing a retired proxy' : 'proxy re-admitted',
                      ),
              }),
      };
    }
    return pool.pool;
  };

  const agentsFor = (settings: FetchSettings): ((proxyUrl: string) => Agents) => {
    const key = JSON.stringify([settings.proxies ?? [], settings.allowPrivate, settings.connectTimeoutMs]);
    if (proxyAgents?.key !== key) {
      for (const agents of proxyAgents?.agents.values() ?? []) {
        agents.http.destroy();
        agents.https.destroy();
      }
      proxyAgents = { key, agents: new Map() };
    }
    const cache = proxyAgents.agents;
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

  return (settings) => {
    const key = JSON.stringify(settings);
    if (current?.key !== key) {
      const direct = createAgents({
        allowPrivate: settings.allowPrivate,
        allowAddresses: settings.allowAddresses,
        maxSockets: deps.maxSockets,
      });
      current = {
        key,
        fetcher: new RoutedFetcher({
          fetcher: new Fetcher(settings, direct),
          userAgent: createUserAgentRotation(settings),
          pool: poolFor(settings),
          agentsFor: agentsFor(settings),
          logger: log,
        }),
      };
    }
    return current.fetcher;
  };
}
