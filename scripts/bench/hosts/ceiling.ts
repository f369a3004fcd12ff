/**
 * The best throughput that politeness and latency allow a crawl of many slow hosts, whatever the
 * crawler: the figure `npm run bench -- --hosts` holds each runner against.
 *
 * A host answering after L ms, with at most C requests in flight and at least D ms between two
 * request starts (start to start, as ackcrawl's host gate counts it), serves at most
 * r = min(C / L, 1 / D) pages per second. Over a whole crawl, host h with n pages needs at least
 * max((n - 1)·D + L, ⌈n / C⌉·L) ms; and with T requests in flight at most across all hosts (the
 * crawler's total concurrency), every page holding a slot for L ms of its host, the crawl needs at
 * least Σ n·L / T ms. The ceiling is the pages over the larger of these bounds. Both are lower
 * bounds of any real crawl's time, so the ceiling is an upper bound of any real crawl's rate.
 */
export interface Politeness {
  concurrency: number;
  delayMs: number;
}

export interface HostLoad {
  latencyMs: number;
  pages: number;
}

export interface Ceiling {
  pages: number;
  pagesPerSecond: number;
  /** The shortest possible crawl, ms: the larger of the two bounds below. */
  makespanMs: number;
  /** The slowest host alone at its polite rate. */
  politenessMs: number;
  /** Every page's latency spread over the total concurrency. */
  concurrencyMs: number;
  bound: 'politeness' | 'total concurrency';
  /** Σ r over the hosts: the steady rate with every host busy at its polite rate. */
  steadyPagesPerSecond: number;
}

/** Pages per second one host can serve under `p` (Infinity without limits, latency 0). */
export function hostRate(latencyMs: number, p: Politeness): number {
  const byConcurrency = latencyMs > 0 ? (p.concurrency * 1000) / latencyMs : Infinity;
  const byDelay = p.delayMs > 0 ? 1000 / p.delayMs : Infinity;
  return Math.min(byConcurrency, byDelay);
}

/** The shortest time, ms, in which one host can serve `pages` pages under `p`. */
export function hostMakespanMs(host: HostLoad, p: Politeness): number {
  if (host.pages === 0) return 0;
  const byDelay = (host.pages - 1) * p.delayMs + host.latencyMs;
  const byConcurrency = Math.ceil(host.pages / p.concurrency) * host.latencyMs;
  return Math.max(byDelay, byConcurrency);
}

export function crawlCeiling(hosts: readonly HostLoad[], p: Politeness, totalConcurrency: number): Ceiling {
  const pages = hosts.reduce((sum, h) => sum + h.pages, 0);
  const politenessMs = Math.max(0, ...hosts.map((h) => hostMakespanMs(h, p)));
  const concurrencyMs = hosts.reduce((sum, h) => sum + h.pages * h.latencyMs, 0) / totalConcurrency;
  const makespanMs = Math.max(politenessMs, concurrencyMs);
  return {
    pages,
    pagesPerSecond: makespanMs > 0 ? (pages * 1000) / makespanMs : Infinity,
    makespanMs,
    politenessMs,
    concurrencyMs,
    bound: politenessMs >= concurrencyMs ? 'politeness' : 'total concurrency',
    steadyPagesPerSecond: hosts.reduce((sum, h) => sum + hostRate(h.latencyMs, p), 0),
  };
}
