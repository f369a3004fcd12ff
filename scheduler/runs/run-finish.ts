import type { FrontierStats } from '../../shared/ports/frontier.js';

/** What a hosted run's end looks like from its frontier counters. */
export type FinishVerdict =
  | { finished: false }
  | { finished: true; outcome: 'succeeded' }
  | { finished: true; outcome: 'failed'; error: string };

/**
 * A run is finished when, after it started (its seeds pushed), its frontier counters show nothing
 * ready, delayed or leased (an outcome on its way to durability keeps its lease until it is
 * settled, so `leased` covers those). It succeeded when it accepted any URL; it failed when it
 * accepted none (every seed refused, or the run cancelled elsewhere): nothing can happen in it.
 */
export function finishVerdict(stats: FrontierStats): FinishVerdict {
  if (stats.ready + stats.delayed + stats.leased > 0) return { finished: false };
  if (stats.total === 0) {
    return { finished: true, outcome: 'failed', error: 'the frontier accepted none of its seeds' };
  }
  return { finished: true, outcome: 'succeeded' };
}
