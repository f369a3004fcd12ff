import { startPeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import type { Logger } from '../../shared/logger.js';
import { FINAL_RUN_STATES, type RunRepository } from '../../shared/ports/sql-store.js';

const DAY_MS = 86_400_000;
/** Runs deleted at most in one pass: a first pass over years of history does not hold SQL long. */
const PER_PASS = 100;

export interface RunRetention {
  /** One pass now, or the one in flight: the ids of the runs it deleted. */
  sweep(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Deletes the runs that ended more than `days` ago, with what SQL holds of them (their failure log,
 * results, extract failures; `RunRepository.delete`), a hundred a pass, the oldest first. The
 * history SQL keeps is then bounded by time, as an operator asks of a crawler that runs every night
 * for years. Of several masters each may delete; a run another deleted first is skipped.
 */
export function startRunRetention(deps: {
  runs: Pick<RunRepository, 'endedBefore' | 'delete'>;
  days: number;
  everyMs: number;
  now: () => number;
  logger: Logger;
}): RunRetention {
  const sweep = async (): Promise<string[]> => {
    const before = deps.now() - deps.days * DAY_MS;
    const deleted: string[] = [];
    for (const id of await deps.runs.endedBefore(before, PER_PASS)) {
      if (await deps.runs.delete(id, FINAL_RUN_STATES)) deleted.push(id);
    }
    if (deleted.length > 0) {
      deps.logger.info(
        { runs: deleted.length, retentionDays: deps.days },
        'deleted runs that ended before the retention period',
      );
    }
    return deleted;
  };
  const pass = startPeriodicPass(sweep, {
    intervalMs: deps.everyMs,
    onError: (err) => deps.logger.warn({ err }, 'run retention pass failed; trying again'),
  });
  return { sweep: pass.runOnce, close: pass.close };
}
