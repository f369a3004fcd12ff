import type { Logger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { CrashPolicy } from '../dispatch/dispatcher.js';
import { CRAWLER_CRASHED, type CrashTally } from '../dispatch/crash-tally.js';
import { decideAfterCrash, type RetryPolicyOptions } from '../retry/retry-policy.js';
import { unfetchedRecord } from './unfetched-record.js';
import { DEFAULT_JOB_ID } from '../../shared/protocol/page-record.js';

export interface CrashOutcomeDeps {
  tally: CrashTally;
  /** The settler: a crash that costs an attempt is a retry, the last one a final failure record. */
  settle: {
    fail(lease: Lease, record: SinkRecord, error: string): void;
    retry(lease: Lease, delayMs: number, error: string): void;
  };
  /** The retry settings of the lease's run, read at each crash. */
  retry: (lease: Lease) => RetryPolicyOptions;
  /** The job of a run, for the failure record (absent: every run is of the default job). */
  jobOf?: (runId: string) => string;
  clock: () => number;
  logger: Logger;
}

/** The dispatcher's CrashPolicy: strikes from the tally, decisions from the retry policy. */
export function crashOutcomes(deps: CrashOutcomeDeps): CrashPolicy {
  return {
    isSuspect: (lease) => deps.tally.isSuspect(lease),
    struck: (lease) => {
      const strikes = deps.tally.strike(lease);
      const decision = decideAfterCrash(strikes, lease.attempt, deps.retry(lease));
      if (decision.kind === 'release') return 'release';
      const message = `in flight on ${strikes} crawlers that died without a goodbye while working on it`;
      const reason = `${CRAWLER_CRASHED}: ${message}`;
      if (decision.kind === 'final') {
        deps.tally.forget(lease.taskId);
        deps.logger.error(
          { taskId: lease.taskId, url: lease.url, strikes },
          'crawlers keep dying on this task; recording it as failed (CRAWLER_CRASHED)',
        );
        deps.settle.fail(
          lease,
          unfetchedRecord(lease, { code: CRAWLER_CRASHED, message }, deps.clock(), {
            jobId: deps.jobOf?.(lease.runId) ?? DEFAULT_JOB_ID,
          }),
          reason,
        );
      } else {
        deps.logger.warn(
          { taskId: lease.taskId, url: lease.url, strikes, attempt: lease.attempt },
          'crawlers keep dying while working on this task; counting an attempt',
        );
        deps.settle.retry(lease, decision.delayMs, reason);
      }
      return 'settled';
    },
  };
}
