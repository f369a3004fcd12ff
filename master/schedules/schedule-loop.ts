import type { Logger } from '../../shared/logger.js';
import type {
  FireRow,
  JobRow,
  RunRow,
  RunScheduledBy,
  ScheduleRow,
  SqlStore,
} from '../../shared/ports/sql-store.js';
import type { CronEngine, CronWatch } from './cron-engine.js';
import { decideOverlap, planFires, type PlannedFire } from './fire-plan.js';
import type { MasterMetrics } from '../metrics/master-metrics.js';

/** Runs that are not final: what the overlap policy looks at. */
const ACTIVE = ['queued', 'running', 'paused'] as const;

export const DEFAULT_CLAIM_LEASE_MS = 60_000;
/** How far back claims left `claimed` are taken over: an older one stays as it is. */
export const RECLAIM_WINDOW_MS = 7 * 24 * 3_600_000;
/** Stale claims taken over per schedule and sync (the rest at the next one). */
const RECLAIM_BATCH = 100;

export interface ScheduleLoopOptions {
  /** How often the schedules are read again from SQL (edits made through another master, waiting fire times). */
  syncMs: number;
  /** A fire time older than this when it is first seen was missed (the misfire policy decides). */
  misfireGraceMs: number;
  /** Most missed fire times counted per schedule. */
  maxMissed: number;
  /**
   * A fire time still `claimed` this long after its claim was made is taken over by the next loop
   * that looks (its claimer died before settling it). Default 60 s: far longer than a claim takes.
   */
  claimLeaseMs?: number;
}

export interface ScheduleLoopDeps {
  store: SqlStore;
  engine: CronEngine;
  clock: { now(): number };
  /** This master process, recorded on the fire times it claims. */
  masterId: string;
  /** Makes a run of the job (master/api/run-actions.ts createRun), with the id and fire time given. */
  createRun(job: JobRow, runId: string, scheduledBy: RunScheduledBy): Promise<RunRow>;
  newId(): string;
  logger: Logger;
  options: ScheduleLoopOptions;
  timers?: { setInterval: typeof setInterval; clearInterval: typeof clearInterval };
  /** Counts misfires, once, by the master that claims them; absent: not counted. */
  metrics?: Pick<MasterMetrics, 'misfires'>;
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
 *
 * A claim names the id its run will get. A master that dies between claiming and settling leaves
 * the fire time `claimed`; once the claim is older than `claimLeaseMs`, the next master to look
 * takes it over (a compare-and-set on the claim) and settles it `started` if the run with that id
 * exists (the claimer died after making it), or else decides it as a fire time due now, with that
 * id. Either way the fire time makes at most one run: a second attempt to make it finds the id taken.
 * Claims older than RECLAIM_WINDOW_MS stay as they are.
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

  const startRun = async (
    row: ScheduleRow,
    job: JobRow,
    fireAt: number,
    runId: string = deps.newId(),
  ): Promise<void> => {
    let run: RunRow;
    try {
      run = await deps.createRun(job, runId, { scheduleId: row.id, fireAt });
    } catch (err) {
      // A claimer that was slow rather than dead made the run after all (the id is taken): it is this fire time's.
      const made = await store.runs.get(runId);
      if (made === null) throw err;
      run = made;
    }
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
    // Claimed again (by this master, now, naming its run) before the slot is cleared: a master that
    // dies after clearing it leaves a claim that the lease takeover finishes, not a fire time
    // waiting for a slot that no longer names it.
    const runId = deps.newId();
    await store.schedules.settleFire(fresh.id, waiting, 'claimed', runId);
    const now = deps.clock.now();
    // Whatever its claim time (another master's clock may run ahead), it is this master's claim now.
    if (!(await store.schedules.reclaimFire(fresh.id, waiting, Number.MAX_SAFE_INTEGER, now, deps.masterId)))
      return;
    if (!(await store.schedules.swapWaiting(fresh.id, waiting, null))) return; // another master took it
    const job = await store.jobs.get(fresh.jobId);
    if (job === null) {
      await store.schedules.settleFire(fresh.id, waiting, 'skipped', null);
      return;
    }
    await startRun(fresh, job, waiting, runId);
  };

  const fire = async (row: ScheduleRow, planned: PlannedFire): Promise<void> => {
    const runId = deps.newId();
    const claimed = await store.schedules.claimFire({
      scheduleId: row.id,
      fireAt: planned.fireAt,
      claimedAt: deps.clock.now(),
      claimedBy: deps.masterId,
      outcome: 'claimed',
      runId,
      missed: planned.folded,
    });
    if (!claimed) return;
    if (planned.late) deps.metrics?.misfires(row.misfire, planned.folded + 1);
    await decide(row, planned, runId);
  };

  /** What a fire time this master claimed comes to: missed, skipped, waiting, or a run with `runId`. */
  const decide = async (row: ScheduleRow, planned: PlannedFire, runId: string): Promise<void> => {
    const { fireAt } = planned;
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
    if (decision === 'start') return startRun(current, job, fireAt, runId);
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

  /** A claim left `claimed` past the lease, taken over by this master: see the loop's comment. */
  const retryClaim = async (row: ScheduleRow, claim: FireRow): Promise<void> => {
    const at = new Date(claim.fireAt).toISOString();
    const log = { scheduleId: row.id, fireAt: at, claimedBy: claim.claimedBy, runId: claim.runId };
    if (claim.runId !== null && (await store.runs.get(claim.runId)) !== null) {
      await store.schedules.settleFire(row.id, claim.fireAt, 'started', claim.runId);
      logger.warn(log, 'fire time left claimed by a master that stopped: its run was made, now settled');
      return;
    }
    const current = (await store.schedules.get(row.id)) ?? row;
    if (current.waitingFireAt === claim.fireAt) {
      // Its claimer had queued it behind an active run: it waits, and releaseWaiting starts it.
      await store.schedules.settleFire(row.id, claim.fireAt, 'waiting', null);
      logger.warn(log, 'fire time left claimed by a master that stopped: it waits behind the active run');
      return;
    }
    logger.warn(log, 'fire time left claimed by a master that stopped: decided again');
    const [planned] = planFires({
      due: [claim.fireAt],
      now: deps.clock.now(),
      graceMs: deps.options.misfireGraceMs,
      misfire: current.misfire,
    });
    // A claim made before claims named their run has none: it gets one now.
    if (planned !== undefined)
      await decide(current, { ...planned, folded: claim.missed }, claim.runId ?? deps.newId());
  };

  /** Takes over the schedule's claims older than the lease (of the last RECLAIM_WINDOW_MS) and settles them. */
  const retryStaleClaims = async (row: ScheduleRow): Promise<void> => {
    const now = deps.clock.now();
    const claimedBefore = now - (deps.options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS);
    const stale = await store.schedules.staleClaims(
      row.id,
      claimedBefore,
      now - RECLAIM_WINDOW_MS,
      RECLAIM_BATCH,
    );
    for (const claim of stale) {
      if (closed) return;
      const mine = await store.schedules.reclaimFire(
        row.id,
        claim.fireAt,
        claimedBefore,
        deps.clock.now(),
        deps.masterId,
      );
      if (mine) await retryClaim(row, claim);
    }
  };

  /** Fires every fire time of the schedule after its last claimed one, up to now. */
  /**
   * Catch-ups asked while one is already waiting its turn come to that one (with the newest row):
   * a schedule whose work is stuck (SQL hanging) holds one queued catch-up, not one per sync.
   */
  const queued = new Map<string, { row: ScheduleRow; done: Promise<void> }>();
  const catchUp = (latest: ScheduleRow): Promise<void> => {
    const waiting = queued.get(latest.id);
    if (waiting !== undefined) {
      waiting.row = latest;
      return waiting.done;
    }
    const entry = { row: latest, done: Promise.resolve() };
    queued.set(latest.id, entry);
    entry.done = serial(latest.id, async () => {
      queued.delete(latest.id);
      await catchUpNow(entry.row);
    });
    return entry.done;
  };
  const catchUpNow = async (row: ScheduleRow): Promise<void> => {
    await releaseWaiting(row);
    await retryStaleClaims(row);
    const last = await store.schedules.lastFire(row.id);
    const anchor = Math.max(last?.fireAt ?? Number.MIN_SAFE_INTEGER, row.updatedAt);
    const now = deps.clock.now();
    const due = engine.between(row.expression, row.timeZone, anchor, now, deps.options.maxMissed);
    const plan = planFires({ due, now, graceMs: deps.options.misfireGraceMs, misfire: row.misfire });
    for (const planned of plan) await fire(row, planned);
  };

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
