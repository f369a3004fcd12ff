import type { Logger } from '../../shared/logger.js';
import type { JobRow, RunRow, ScheduleRow, SqlStore } from '../../shared/ports/sql-store.js';
import type { CronEngine, CronWatch } from './cron-engine.js';
import { decideOverlap, planFires, type PlannedFire } from './fire-plan.js';

/** Runs that are not final: what the overlap policy looks at. */
const ACTIVE = ['queued', 'running', 'paused'] as const;

export interface ScheduleLoopOptions {
  /** How often the schedules are read again from SQL (edits made through another master, waiting fire times). */
  syncMs: number;
  /** A fire time older than this when it is first seen was missed (the misfire policy decides). */
  misfireGraceMs: number;
  /** Most missed fire times counted per schedule. */
  maxMissed: number;
}

export interface ScheduleLoopDeps {
  store: SqlStore;
  engine: CronEngine;
  clock: { now(): number };
  /** This master process, recorded on the fire times it claims. */
  masterId: string;
  /** Makes a run of the job (master/api/run-actions.ts createRun), with the id given. */
  createRun(job: JobRow, runId: string): Promise<RunRow>;
  newId(): string;
  logger: Logger;
  options: ScheduleLoopOptions;
  timers?: { setInterval: typeof setInterval; clearInterval: typeof clearInterval };
}

export interface ScheduleLoop {
  /** Reads the schedules, fires what is due (misfires included) and watches the rest. */
  start(): Promise<void>;
  /** Reads the schedules again now (after an edit through this master's API). */
  refresh(): Promise<void>;
  /** Stops watching and waits for the fire times being handled; safe to call twice. */
  close(): Promise<void>;
}

interface Watched {
  row: ScheduleRow;
  watch: CronWatch;
}

/**
 * The master's scheduler loop (docs/schedules.md). Every master runs one; they share nothing but
 * SQL. A fire time is claimed there first (insert-if-absent of schedule id and fire time), and only
 * the master whose claim landed goes on: with the overlap policy, to a run made the way
 * `POST /jobs/{id}/runs` makes one, or to waiting, or to a skip. node-cron wakes the loop at fire
 * times; the fire times themselves are counted from the schedule's last claimed one, so a late
 * wake-up, a master that was down, or a second master changes nothing about which fire times there were.
 */
export function createScheduleLoop(deps: ScheduleLoopDeps): ScheduleLoop {
  const { store, engine, logger } = deps;
  const timers = deps.timers ?? { setInterval, clearInterval };
  const watched = new Map<string, Watched>();
  /** One chain of work per schedule: its fire times are handled one at a time, in order. */
  const chains = new Map<string, Promise<void>>();
  let interval: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  let closing: Promise<void> | null = null;
  let syncing: Promise<void> | null = null;

  const serial = (scheduleId: string, work: () => Promise<void>): Promise<void> => {
    const next = (chains.get(scheduleId) ?? Promise.resolve())
      .then(() => (closed ? undefined : work()))
      .catch((err: unknown) =>
        logger.error({ err, scheduleId }, 'schedule work failed; the next sync tries again'),
      );
    chains.set(scheduleId, next);
    void next.then(() => {
      if (chains.get(scheduleId) === next) chains.delete(scheduleId);
    });
    return next;
  };

  const activeRuns = async (jobId: string): Promise<number> =>
    (await store.runs.list({ jobId, states: ACTIVE, limit: 1 })).items.length;

  const startRun = async (row: ScheduleRow, job: JobRow, fireAt: number): Promise<void> => {
    const run = await deps.createRun(job, deps.newId());
    await store.schedules.settleFire(row.id, fireAt, 'started', run.id);
    logger.info(
      { scheduleId: row.id, jobId: job.id, runId: run.id, fireAt: new Date(fireAt).toISOString() },
      'scheduled run started',
    );
  };

  /** A fire time waiting behind an active run starts once the job has none. */
  const releaseWaiting = async (row: ScheduleRow): Promise<void> => {
    const fresh = await store.schedules.get(row.id);
    const waiting = fresh?.waitingFireAt ?? null;
    if (fresh === null || waiting === null || (await activeRuns(fresh.jobId)) > 0) return;
    if (!(await store.schedules.swapWaiting(fresh.id, waiting, null))) return; // another master took it
    const job = await store.jobs.get(fresh.jobId);
    if (job === null) {
      await store.schedules.settleFire(fresh.id, waiting, 'skipped', null);
      return;
    }
    await startRun(fresh, job, waiting);
  };

  const fire = async (row: ScheduleRow, planned: PlannedFire): Promise<void> => {
    const { fireAt } = planned;
    const claimed = await store.schedules.claimFire({
      scheduleId: row.id,
      fireAt,
      claimedAt: deps.clock.now(),
      claimedBy: deps.masterId,
      outcome: 'claimed',
      runId: null,
      missed: planned.folded,
    });
    if (!claimed) return;
    const at = new Date(fireAt).toISOString();
    if (planned.kind === 'missed') {
      await store.schedules.settleFire(row.id, fireAt, 'missed', null);
      logger.info(
        { scheduleId: row.id, fireAt: at, missed: planned.folded + 1 },
        'missed fire times skipped (misfire policy skip)',
      );
      return;
    }
    const job = await store.jobs.get(row.jobId);
    if (job === null) {
      await store.schedules.settleFire(row.id, fireAt, 'skipped', null);
      logger.warn({ scheduleId: row.id, jobId: row.jobId }, 'schedule of a deleted job: fire time skipped');
      return;
    }
    const current = (await store.schedules.get(row.id)) ?? row;
    const decision = decideOverlap(current.overlap, await activeRuns(job.id), current.waitingFireAt !== null);
    if (decision === 'start') return startRun(current, job, fireAt);
    if (decision === 'wait' && (await store.schedules.swapWaiting(row.id, null, fireAt))) {
      await store.schedules.settleFire(row.id, fireAt, 'waiting', null);
      logger.info(
        { scheduleId: row.id, fireAt: at },
        'fire time waits behind the active run (overlap queue)',
      );
      return;
    }
    await store.schedules.settleFire(row.id, fireAt, 'skipped', null);
    logger.info(
      { scheduleId: row.id, fireAt: at, overlap: current.overlap },
      'fire time skipped: a run of the job is not final',
    );
  };

  /** Fires every fire time of the schedule after its last claimed one, up to now. */
  const catchUp = (row: ScheduleRow): Promise<void> =>
    serial(row.id, async () => {
      await releaseWaiting(row);
      const last = await store.schedules.lastFire(row.id);
      const anchor = Math.max(last?.fireAt ?? Number.MIN_SAFE_INTEGER, row.updatedAt);
      const now = deps.clock.now();
      const due = engine.between(row.expression, row.timeZone, anchor, now, deps.options.maxMissed);
      const plan = planFires({ due, now, graceMs: deps.options.misfireGraceMs, misfire: row.misfire });
      for (const planned of plan) await fire(row, planned);
    });

  const watch = (row: ScheduleRow): void => {
    const w = engine.watch(row.expression, row.timeZone, () => {
      const current = watched.get(row.id);
      if (current !== undefined) void catchUp(current.row);
    });
    watched.set(row.id, { row, watch: w });
  };

  const sync = async (): Promise<void> => {
    const seen = new Set<string>();
    let after: string | null = null;
    do {
      const page = await store.schedules.list({ limit: 500, after });
      for (const row of page.items) {
        if (!row.enabled) continue;
        seen.add(row.id);
        const current = watched.get(row.id);
        if (
          current === undefined ||
          current.row.updatedAt !== row.updatedAt ||
          current.row.expression !== row.expression
        ) {
          current?.watch.stop();
          watch(row);
        } else {
          current.row = row;
        }
        void catchUp(row);
      }
      after = page.next;
    } while (after !== null && !closed);
    for (const [id, w] of watched) {
      if (!seen.has(id)) {
        w.watch.stop();
        watched.delete(id);
      }
    }
  };

  const syncOnce = (): Promise<void> => {
    if (closed) return Promise.resolve();
    syncing ??= sync()
      .catch((err: unknown) => logger.error({ err }, 'reading schedules failed; the next sync tries again'))
      .finally(() => {
        syncing = null;
      });
    return syncing;
  };

  return {
    async start() {
      await syncOnce();
      await Promise.all([...chains.values()]);
      interval = timers.setInterval(() => void syncOnce(), deps.options.syncMs);
      interval.unref?.();
      logger.info({ schedules: watched.size, masterId: deps.masterId }, 'schedule loop started');
    },
    async refresh() {
      await syncing; // one that began before the change may have read the old rows
      await syncOnce();
      await Promise.all([...chains.values()]);
    },
    close() {
      closing ??= (async () => {
        closed = true;
        if (interval !== null) timers.clearInterval(interval);
        for (const w of watched.values()) w.watch.stop();
        watched.clear();
        await syncing;
        await Promise.all([...chains.values()]);
      })();
      return closing;
    },
  };
}
