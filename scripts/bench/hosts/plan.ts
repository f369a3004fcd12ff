import { mulberry32 } from '../../site/prng.js';
import { hostRate, type HostLoad, type Politeness } from './ceiling.js';

export interface HostsPlanOptions {
  hosts: number;
  /** Pages over all hosts (the split rounds, so the real total is close to this). */
  pages: number;
  seed: number;
  minLatencyMs: number;
  maxLatencyMs: number;
  politeness: Politeness;
}

export interface PlannedHost extends HostLoad {
  /** The loopback address the host listens on: 127.0.0.2, 127.0.0.3, … */
  address: string;
}

/** Distinct loopback addresses: ackcrawl keys politeness by host[:port], Crawlee by hostname. */
export const MAX_HOSTS = 253;

export function hostAddress(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_HOSTS) {
    throw new RangeError(`host index must be 0…${MAX_HOSTS - 1}`);
  }
  return `127.0.0.${index + 2}`;
}

/**
 * The hosts of a run, deterministic from the seed. Latencies are spread evenly over
 * [minLatencyMs, maxLatencyMs] (one per stratum, so every run sees the same mix) and dealt to the
 * hosts in a seeded order.
 *
 * Each host gets pages in proportion to its polite rate r (ceiling.ts), so at the ceiling every
 * host is busy from the first second to the last and all finish together. The whole crawl, start
 * to end, can then be held against the ceiling without choosing a "steady" window: a crawler that
 * is slow to reach some hosts, or leaves one idle near the end, pays for it in the figure, as it
 * would on a real crawl. (Equal page counts would instead make the slowest host the whole bound,
 * and a crawler could idle on every other host without losing anything.)
 */
export function planHosts(o: HostsPlanOptions): PlannedHost[] {
  const span = o.maxLatencyMs - o.minLatencyMs;
  const latencies = Array.from({ length: o.hosts }, (_, i) =>
    Math.round(o.minLatencyMs + (span * (i + 0.5)) / o.hosts),
  );
  const random = mulberry32(o.seed ^ 0x4057);
  for (let i = latencies.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [latencies[i], latencies[j]] = [latencies[j] as number, latencies[i] as number];
  }
  const rates = latencies.map((l) => hostRate(l, o.politeness));
  const seconds = o.pages / rates.reduce((a, b) => a + b, 0);
  return latencies.map((latencyMs, i) => ({
    address: hostAddress(i),
    latencyMs,
    pages: Math.max(1, Math.round((rates[i] as number) * seconds)),
  }));
}
