import type { Logger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { CrashPolicy } from '../dispatch/dispatcher.js';
import { CRAWLER_CRASHED, type CrashTally } from '../dispatch/crash-tally.js';
import { decideAfterCrash, type RetryPolicyOptions } from '../retry/retry-policy.js';
import { unfetchedRecord } from './unfetched-record.js';

export interface CrashOutcomeDeps {
  tally: CrashTally;
  /** The settler: a crash that costs an attempt is a retry, the last one a final failure record. */
  settle: {
    fail(lease: Lease, record: SinkRecord, error: string): void;
    retry(lease: Lease, delayMs: number, error: string): void;
  };
  /** The crawl's retry settings, read at each crash. */
  retry: () => RetryPolicyOptions;
  clock: () => number;
  logger: Logger;
}

/** The dispatcher's CrashPolicy: strikes from the tally, decisions from the retry policy. */
export function crashOutcomes(deps: CrashOutcomeDeps): CrashPolicy {
  return {
    isSuspect: (lease) => deps.tally.isSuspect(lease),
    struck: (lease) => {
      const strikes = deps.tally.strike(lease);
      const decision = decideAfterCrash(strikes, lease.attempt, deps.retry());
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
          unfetchedRecord(lease, { code: CRAWLER_CRASHED, message }, deps.clock()),
          reason,
        );
      } else {
        deps.logger.warn(
          { taskId: lease.taskId, url: lease.url, strikes, attempt: lease.attempt },
          'a second crawler died working on this task; counting an attempt',
        );
        deps.settle.retry(lease, decision.delayMs, reason);
      }
      return 'settled';
    },
  };
}
