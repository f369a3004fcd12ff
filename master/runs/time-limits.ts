import { startPeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import type { Logger } from '../../shared/logger.js';
import type { RunCommand } from '../../shared/ports/run-control.js';
import type { RunRepository, RunRow, RunState } from '../../shared/ports/sql-store.js';

/** The states a run's clock runs in: it started, and has not ended (a pause does not stop it). */
const TIMED: readonly RunState[] = ['running', 'paused'];

export interface TimeLimits {
  /** One pass now, or the one in flight: the ids of the runs it ended (the timer runs one every `everyMs`). */
  sweep(): Promise<string[]>;
  /** Stops the timer and waits for the pass in flight. */
  close(): Promise<void>;
}

/** A run's `maxDurationMs` (0 or absent: none), read from its settings snapshot. */
export function maxDurationOf(run: Pick<RunRow, 'settings'>): number {
  const limit = (run.settings as { maxDurationMs?: unknown } | null)?.maxDurationMs;
  return typeof limit === 'number' && Number.isFinite(limit) && limit > 0 ? limit : 0;
}

/** When the run's time is up (epoch ms), or null when it has no limit or has not started. */
export function deadlineOf(run: Pick<RunRow, 'settings' | 'startedAt'>): number | null {
  const limit = maxDurationOf(run);
  return limit === 0 || run.startedAt === null ? null : run.startedAt + limit;
}

/**
 * Ends the runs whose `maxDurationMs` has passed since they started: each is cancelled in SQL (a
 * compare-and-set, so of several masters one does it, and a run that ended meanwhile is left as
 * it is) with the limit as its reason, then the schedulers are told, as for a cancel through the
 * API: they drop its queued URLs (counted as cancelled) and let the fetches in flight finish. A
 * pass that fails (the database away) is logged and the next one tries again.
 */
export function startTimeLimits(deps: {
  runs: Pick<RunRepository, 'list' | 'transition'>;
  notify: (command: RunCommand) => Promise<void>;
  everyMs: number;
  now: () => number;
  logger: Logger;
}): TimeLimits {
  const sweep = async (): Promise<string[]> => {
    const due: RunRow[] = [];
    let after: string | null = null;
    do {
      const page = await deps.runs.list({ states: TIMED, limit: 500, after });
      const now = deps.now();
      for (const run of page.items) {
        const deadline = deadlineOf(run);
        if (deadline !== null && deadline <= now) due.push(run);
      }
      after = page.next;
    } while (after !== null);
    const ended: string[] = [];
    for (const run of due) {
      const now = deps.now();
      const limit = maxDurationOf(run);
      const error = `time limit: maxDurationMs ${limit} reached (${Math.round((now - (run.startedAt ?? now)) / 1000)} s since it started)`;
      const changed = await deps.runs.transition(run.id, TIMED, 'cancelled', { endedAt: now, error });
      if (changed === null) continue;
      deps.logger.warn(
        { runId: run.id, jobId: run.jobId, maxDurationMs: limit },
        'run reached its time limit; cancelled',
      );
      await deps.notify({ type: 'cancel', runId: run.id });
      ended.push(run.id);
    }
    return ended;
  };
  const pass = startPeriodicPass(sweep, {
    intervalMs: deps.everyMs,
    onError: (err) => deps.logger.warn({ err }, 'run time-limit sweep failed; trying again'),
  });
  return { sweep: pass.runOnce, close: pass.close };
}
