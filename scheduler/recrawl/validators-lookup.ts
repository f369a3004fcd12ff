import type { Logger } from '../../shared/logger.js';
import type { TaskValidators } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { RunRegistry } from '../runs/run-registry.js';
import type { ValidatorsIndex } from './validators-index.js';

/** Index read failures are said at most this often (a broken disk fails every lookup). */
const WARN_EVERY_MS = 10_000;

/**
 * The dispatcher's `validatorsOf`: a page task of a hosted run with `conditionalRequests` on gets
 * the validators of its URL's last capture in the run's job, if the index has them. Sitemap tasks,
 * runs with it off and URLs the index does not know are fetched in full; so is everything while
 * the index cannot be read (slower, never wrong).
 */
export function validatorsLookup(
  index: Pick<ValidatorsIndex, 'lookup'>,
  registry: Pick<RunRegistry, 'get'>,
  logger: Logger,
  clock: () => number = Date.now,
): (lease: Lease) => TaskValidators | null {
  let warnedAt = -Infinity;
  return (lease) => {
    if (lease.kind === 'sitemap') return null;
    const run = registry.get(lease.runId);
    if (!run || !run.settings.conditionalRequests) return null;
    try {
      return index.lookup(run.jobId, lease.url)?.validators ?? null;
    } catch (err) {
      const now = clock();
      if (now - warnedAt >= WARN_EVERY_MS) {
        warnedAt = now;
        logger.warn({ err }, 'the recrawl index cannot be read; fetching in full meanwhile');
      }
      return null;
    }
  };
}
