import type { FrontierStats } from '../../../ports/frontier.js';
import type { LedgerRun } from './ledger.js';

export interface RunStatsInputs {
  /** Ready messages in each run's level queues (runs not listed: none). */
  queued: ReadonlyMap<string, number>;
  /** Messages waiting in the delay queues, or on their way there, over every run. */
  waiting: number;
  bufferedOf: (runId: string) => number;
  leasedOf: (runId: string) => number;
  /**
   * Hosts are split among schedulers: this ledger's pending tasks may be finished by another
   * scheduler, so what no count shows is not taken to be on its way (only the delay queues count).
   */
  split?: boolean;
}

/**
 * Each run's stats from the ledger's counters and what the broker and this process hold. A run's
 * pending tasks (accepted, neither done nor failed) that no count shows are in a delay queue or on
 * their way between the broker and this process; the delay queues are shared, so their count is
 * given to the runs in turn, and whatever is left counts as ready. A cancelled run's pending tasks
 * that are not leased are cancelled.
 */
export function runStats(runs: readonly LedgerRun[], inputs: RunStatsInputs): Map<string, FrontierStats> {
  const out = new Map<string, FrontierStats>();
  let waiting = inputs.waiting;
  for (const run of runs) {
    const { runId, total, done, failed } = run;
    const pending = Math.max(0, total - done - failed);
    const leased = inputs.leasedOf(runId);
    if (run.state === 'cancelled') {
      const stillLeased = Math.min(leased, pending);
      out.set(runId, {
        ready: 0,
        delayed: 0,
        leased: stillLeased,
        done,
        failed,
        total,
        cancelled: pending - stillLeased,
      });
      continue;
    }
    let ready = (inputs.queued.get(runId) ?? 0) + inputs.bufferedOf(runId);
    const unseen = pending - ready - leased;
    let delayed = 0;
    if (unseen > 0) {
      delayed = Math.min(unseen, waiting);
      waiting -= delayed;
      if (inputs.split !== true) ready += unseen - delayed;
    }
    out.set(runId, { ready, delayed, leased, done, failed, total, cancelled: 0 });
  }
  return out;
}
