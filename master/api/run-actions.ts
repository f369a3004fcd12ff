import type { RunRow, RunState } from '../../shared/ports/sql-store.js';

export type RunAction = 'pause' | 'resume' | 'cancel';

/**
 * What each command may do to a run, as compare-and-set transitions in SQL: from which stored
 * states, and to which. A paused run that had started resumes `running` (its scheduler takes it up
 * again, and until it reports the run is shown queued); one that never started goes back `queued`.
 */
export const RUN_ACTIONS: Record<RunAction, { from: readonly RunState[]; to: (run: RunRow) => RunState }> = {
  pause: { from: ['queued', 'running'], to: () => 'paused' },
  resume: { from: ['paused'], to: (run) => (run.startedAt === null ? 'queued' : 'running') },
  cancel: { from: ['queued', 'running', 'paused'], to: () => 'cancelled' },
};
