import type { RunCommand } from '../../shared/ports/run-control.js';
import type { JobRow, RunRow, RunScheduledBy, RunState } from '../../shared/ports/sql-store.js';
import type { MasterAppDeps } from './deps.js';

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

type RunDeps = Pick<MasterAppDeps, 'store' | 'runControl' | 'clock' | 'newId' | 'logger'>;

/** Tells the schedulers; SQL has the change already, so a lost command only costs time. */
export async function notifySchedulers(deps: RunDeps, command: RunCommand): Promise<void> {
  try {
    await deps.runControl.publish(command);
  } catch (err) {
    deps.logger.warn(
      { err, command: command.type, runId: command.runId },
      'run command not sent; schedulers will read the run from SQL',
    );
  }
}

const ZERO = { done: 0, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 };

/**
 * A new run of a job, the one way runs are made (`POST /jobs/{id}/runs` and the schedules):
 * queued in SQL with a snapshot of the job's settings, then announced to the schedulers. `id`,
 * when given, is the run's id (a schedule names it when it claims the fire time, before it creates
 * the run); `scheduledBy`, the schedule fire time the run is made for (null: made through the API).
 */
export async function createRun(
  deps: RunDeps,
  job: JobRow,
  id: string = deps.newId(),
  scheduledBy: RunScheduledBy | null = null,
): Promise<RunRow> {
  const row = await deps.store.runs.create({
    id,
    jobId: job.id,
    state: 'queued',
    settings: job.settings,
    counters: ZERO,
    createdAt: deps.clock.now(),
    startedAt: null,
    endedAt: null,
    schedulerId: null,
    heartbeatAt: null,
    error: null,
    scheduledBy,
  });
  await notifySchedulers(deps, { type: 'start', runId: row.id, jobId: job.id, settings: row.settings });
  return row;
}
