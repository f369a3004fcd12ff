import { errorCodeFacts } from '../../shared/error-codes/index.js';
import type { RunStall } from '../../shared/ports/sql-store.js';

/** A commit shorter than this is a busy store, not a stall: the master shows nothing of it. */
export const STALL_SHOWN_AFTER_MS = 5_000;

/**
 * Why this scheduler's outcomes wait, for the master's run view (`waiting`), from what it knows:
 * the broker blocking its publishing, or the code of the last failure. Catalogued meanings only,
 * never an error's own message, which may name hosts and paths; the scheduler's log has those.
 */
export function stallOf(
  stalled: { since: number; code: string | null } | null,
  publishBlocked: boolean,
): RunStall | undefined {
  if (stalled === null) return undefined;
  const { since, code } = stalled;
  if (publishBlocked) {
    return {
      since,
      reason:
        'RabbitMQ blocks publishing (a disk or memory alarm on the broker); the crawl goes on once it clears',
    };
  }
  if (code !== null) {
    const meaning = errorCodeFacts(code)?.meaning ?? 'see the scheduler log';
    return { since, reason: `outcomes cannot be made durable: ${code} (${meaning})` };
  }
  return { since, reason: 'outcomes wait for the page sink or the frontier to confirm them' };
}
