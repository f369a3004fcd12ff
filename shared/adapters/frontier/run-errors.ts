import { InvalidInputError } from '../../errors.js';

/** Pause or resume of a run that was cancelled: a conflict (409), not something a retry fixes. */
export function runCancelledError(runId: string): InvalidInputError {
  return new InvalidInputError(
    'FRONTIER_RUN_CANCELLED',
    `run ${runId} is cancelled: it cannot be paused or resumed`,
    {
      status: 409,
      details: { runId },
    },
  );
}
