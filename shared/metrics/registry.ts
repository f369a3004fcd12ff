import { collectDefaultMetrics, Registry } from 'prom-client';

/** Every series of ackcrawl starts with this (Prometheus naming: one prefix per application). */
export const METRIC_PREFIX = 'ackcrawl_';

export interface MetricsRegistryOptions {
  /**
   * The process's own numbers (CPU, memory, event-loop lag, handles, GC), under the prefix.
   * Default true; a test that only checks its own series may leave them out.
   */
  defaults?: boolean;
}

/**
 * One registry per process, made by its composition root (main.ts) and passed to whatever counts;
 * tests make their own. Nothing registers on prom-client's global registry, so two roles in one
 * process (the embedded crawl, tests) never clash.
 */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaults ?? true) {
    // Event-loop lag is sampled with a histogram of this resolution (ms); prom-client's default.
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX, eventLoopMonitoringPrecision: 10 });
  }
  return registry;
}

export type { Registry } from 'prom-client';
