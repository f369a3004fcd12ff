import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalRunControl } from '../../shared/adapters/run-control/local-run-control.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { FireRow, MisfirePolicy, OverlapPolicy, SqlStore } from '../../shared/ports/sql-store.js';
import { createRun } from '../../master/api/run-actions.js';
import { masterConfigSchema } from '../../master/config.js';
import { loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';
import { nodeCronEngine } from '../../master/schedules/cron-engine.js';
import { decideOverlap, planFires } from '../../master/schedules/fire-plan.js';
import {
  createScheduleLoop,
  type ScheduleLoop,
  type ScheduleLoopOptions,
} from '../../master/schedules/schedule-loop.js';
import { FakeClock } from '../helpers/fake-clock.js';

const engine = nodeCronEngine();
/** A whole minute in 2026, so that fire times fall on round numbers. */
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('schedules: fire plan', () => {
  it('on-time fire times fire; missed ones fold into one run (run-once) or into none (skip)', () => {
    const due = [T0, T0 + 10_000, T0 + 20_000, T0 + 30_000];
    const now = T0 + 30_500;
    assert.deepEqual(planFires({ due, now, graceMs: 5_000, misfire: 'run-once' }), [
      { fireAt: T0 + 20_000, kind: 'run', folded: 2, late: true },
      { fireAt: T0 + 30_000, kind: 'run', folded: 0, late: false },
    ]);
    assert.deepEqual(planFires({ due, now, graceMs: 5_000, misfire: 'skip' }), [
      { fireAt: T0 + 20_000, kind: 'missed', folded: 2, late: true },
      { fireAt: T0 + 30_000, kind: 'run', folded: 0, late: false },
    ]);
    assert.deepEqual(planFires({ due: [], now, graceMs: 5_000, misfire: 'skip' }), []);
  });

  it('overlap: allow always starts; skip only when idle; queue waits once, then skips', () => {
    const table: [OverlapPolicy, number, boolean, string][] = [
      ['allow', 3, true, 'start'],
      ['skip', 0, false, 'start'],
      ['skip', 1, false, 'skip'],
      ['queue', 0, true, 'start'],
      ['queue', 1, false, 'wait'],
      ['queue', 1, true, 'skip'],
    ];
    for (const [policy, active, waiting, expected] of table) {
      assert.equal(decideOverlap(policy, active, waiting), expected, `${policy} ${active} ${waiting}`);
    }
  });

  it('the engine lists fire times in a time zone, between two instants, newest when capped', () => {
    // 09:00 in Paris is 08:00 UTC in January.
    assert.deepEqual(engine.next('0 9 * * *', 'Europe/Paris', T0, 2), [
      Date.UTC(2026, 0, 2, 8),
      Date.UTC(2026, 0, 3, 8),
    ]);
    assert.deepEqual(engine.between('*/10 * * * * *', 'UTC', T0, T0 + 30_000, 100), [
      T0 + 10_000,
      T0 + 20_000,
      T0 + 30_000,
    ]);
    assert.deepEqual(engine.between('* * * * * *', 'UTC', T0 - 86_400_000, T0, 2), [T0 - 1_000, T0]);
    assert.deepEqual(engine.problems('*/10 * * * * *', 'Asia/Tokyo'), []);
    const bad = engine.problems('61 * * * *', 'Mars/Olympus');
    assert.deepEqual(
      bad.map((p) => p.field),
      ['timeZone', 'expression'],
    );
  });
});

describe('schedules: master settings', () => {
  it('the claim lease is ACKCRAWL_SCHEDULE_CLAIM_LEASE_MS: 60 s by default, at least 1 s', () => {
    assert.equal(loadConfig(masterConfigSchema, {}).scheduleClaimLeaseMs, 60_000);
    assert.equal(
      loadConfig(masterConfigSchema, { ACKCRAWL_SCHEDULE_CLAIM_LEASE_MS: '5000' }).scheduleClaimLeaseMs,
      5_000,
    );
    assert.throws(
      () => loadConfig(masterConfigSchema, { ACKCRAWL_SCHEDULE_CLAIM_LEASE_MS: '10' }),
      (err: unknown) => err instanceof ConfigError && /ACKCRAWL_SCHEDULE_CLAIM_LEASE_MS/.test(err.message),
    );
  });
});

describe('schedules: the loop, with an injected clock', () => {
  let dir: string;
  let store: SqlStore;
  const cleanups: (() => Promise<void>)[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-sched-'));
    store = await openSqlStore(`sqlite:${join(dir, 'ackcrawl.db')}`);
  });
  after(async () => {
    // Closed here too, so that a failed assertion leaves no cron watch keeping the process up.
    for (const cleanup of cleanups) await cleanup();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function setup(
    overlap: OverlapPolicy,
    misfire: MisfirePolicy = 'run-once',
    clock = new FakeClock(T0),
  ) {
    const jobId = randomUUID();
    await store.jobs.create({
      id: jobId,
      name: jobId,
      settings: { seeds: ['http://127.0.0.1/'] },
      createdAt: T0,
      updatedAt: T0,
    });
    const schedule = await store.schedules.put({
      id: randomUUID(),
      jobId,
      expression: '*/10 * * * * *',
      timeZone: 'UTC',
      overlap,
      misfire,
      enabled: true,
      waitingFireAt: null,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    const runControl = createLocalRunControl(silentLogger());
    const loops: ScheduleLoop[] = [];
    const runDeps = { store, runControl, clock, newId: randomUUID, logger: silentLogger() };
    const loop = (masterId: string, options: Partial<ScheduleLoopOptions> = {}): ScheduleLoop => {
      const made = createScheduleLoop({
        store,
        engine,
        clock,
        masterId,
        createRun: (job, runId, scheduledBy) => createRun(runDeps, job, runId, scheduledBy),
        newId: randomUUID,
        logger: silentLogger(),
        options: { syncMs: 3_600_000, misfireGraceMs: 2_000, maxMissed: 1_000, ...options },
      });
      loops.push(made);
      return made;
    };
    const runs = async () => (await store.runs.list({ jobId, limit: 500 })).items;
    const fires = async () => (await store.schedules.listFires(schedule.id, { limit: 500 })).items.reverse();
    const close = async () => {
      await Promise.all(loops.map((l) => l.close()));
      await runControl.close();
    };
    cleanups.push(close);
    /** What a master that died right after claiming `fireAt` (and choosing its run id) left behind. */
    const deadClaim = async (fireAt: number, fields: Partial<FireRow> = {}): Promise<FireRow> => {
      const claim: FireRow = {
        scheduleId: schedule.id,
        fireAt,
        claimedAt: fireAt,
        claimedBy: 'dead-master',
        outcome: 'claimed',
        runId: randomUUID(),
        missed: 0,
        ...fields,
      };
      assert.equal(await store.schedules.claimFire(claim), true);
      return claim;
    };
    const fireOf = async (at: number) => (await fires()).find((f) => f.fireAt === at);
    const runsFor = async (at: number) => (await runs()).filter((r) => r.scheduledBy?.fireAt === at);
    const jobRow = async () => {
      const job = await store.jobs.get(jobId);
      assert.ok(job);
      return job;
    };
    return { clock, jobId, schedule, loop, runs, fires, close, deadClaim, fireOf, runsFor, jobRow, runDeps };
  }

  it('skip: a fire time while a run is not final starts nothing', async () => {
    const t = await setup('skip');
    const loop = t.loop('a');
    await loop.start();
    assert.equal((await t.runs()).length, 0, 'nothing due at the start');
    t.clock.advance(10_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 1);
    t.clock.advance(10_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 1, 'the first run is still queued');
    assert.deepEqual(
      (await t.fires()).map((f) => f.outcome),
      ['started', 'skipped'],
    );
    const [run] = await t.runs();
    await store.runs.transition(run?.id ?? '', ['queued'], 'succeeded', { endedAt: t.clock.now() });
    t.clock.advance(10_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 2, 'a fire time after the run ended starts one');
    await t.close();
  });

  it('queue: one fire time waits behind the active run, a third is skipped, the waiting one starts after', async () => {
    const t = await setup('queue');
    const loop = t.loop('a');
    await loop.start();
    for (let i = 0; i < 3; i += 1) {
      t.clock.advance(10_000);
      await loop.refresh();
    }
    assert.equal((await t.runs()).length, 1);
    assert.deepEqual(
      (await t.fires()).map((f) => f.outcome),
      ['started', 'waiting', 'skipped'],
    );
    const [first] = await t.runs();
    await store.runs.transition(first?.id ?? '', ['queued'], 'cancelled', { endedAt: t.clock.now() });
    t.clock.advance(1_000);
    await loop.refresh();
    const runs = await t.runs();
    assert.equal(runs.length, 2);
    const fires = await t.fires();
    assert.equal(fires[1]?.outcome, 'started');
    assert.equal(fires[1]?.runId, runs[0]?.id, 'the waiting fire time made the new run');
    assert.deepEqual(
      runs.map((r) => r.scheduledBy),
      [
        { scheduleId: t.schedule.id, fireAt: T0 + 20_000 },
        { scheduleId: t.schedule.id, fireAt: T0 + 10_000 },
      ],
      'the released run names the fire time that waited, not the time it was released',
    );
    assert.equal((await store.schedules.get(t.schedule.id))?.waitingFireAt, null);
    await t.close();
  });

  it('allow: every fire time starts a run', async () => {
    const t = await setup('allow');
    const loop = t.loop('a');
    await loop.start();
    for (let i = 0; i < 3; i += 1) {
      t.clock.advance(10_000);
      await loop.refresh();
    }
    const runs = await t.runs();
    assert.equal(runs.length, 3);
    const fires = await t.fires();
    for (const f of fires) {
      const run = runs.find((r) => r.id === f.runId);
      assert.deepEqual(run?.scheduledBy, { scheduleId: t.schedule.id, fireAt: f.fireAt }, JSON.stringify(f));
    }
    await t.close();
  });

  it('a claim names its run id before the run is made, and the run takes it', async () => {
    const t = await setup('allow');
    let claimedRunId: string | null | undefined;
    const loop = createScheduleLoop({
      store,
      engine,
      clock: t.clock,
      masterId: 'a',
      // What the claim says at the moment the run is made.
      createRun: async (job, runId, scheduledBy) => {
        claimedRunId = (await t.fireOf(scheduledBy.fireAt))?.runId;
        assert.equal((await t.fireOf(scheduledBy.fireAt))?.outcome, 'claimed');
        return createRun(t.runDeps, job, runId, scheduledBy);
      },
      newId: randomUUID,
      logger: silentLogger(),
      options: { syncMs: 3_600_000, misfireGraceMs: 2_000, maxMissed: 1_000 },
    });
    try {
      await loop.start();
      t.clock.advance(10_000);
      await loop.refresh();
    } finally {
      await loop.close();
    }
    const [run] = await t.runs();
    assert.ok(run);
    assert.equal(claimedRunId, run.id);
    assert.equal((await t.fireOf(T0 + 10_000))?.runId, run.id);
    await t.close();
  });

  it('a claim left claimed by a dead master is taken over after the lease, by one of two loops, and makes one run', async () => {
    const t = await setup('allow', 'run-once');
    const dead = await t.deadClaim(T0 + 10_000);
    const [a, b] = [t.loop('a', { claimLeaseMs: 30_000 }), t.loop('b', { claimLeaseMs: 30_000 })];
    t.clock.advance(20_000);
    await Promise.all([a.start(), b.start()]);
    assert.deepEqual(await t.fireOf(T0 + 10_000), dead, 'within the lease the claim is left to its master');
    assert.equal(await store.runs.get(dead.runId ?? ''), null);

    t.clock.advance(25_000); // the claim is 35 s old: past the lease
    await Promise.all([a.refresh(), b.refresh()]);
    const settled = await t.fireOf(T0 + 10_000);
    assert.equal(settled?.outcome, 'started');
    assert.equal(settled?.runId, dead.runId, 'the run took the id the claim named');
    assert.ok(['a', 'b'].includes(settled?.claimedBy ?? ''), `taken over by ${settled?.claimedBy}`);
    assert.equal(settled?.claimedAt, t.clock.now());
    const made = await t.runsFor(T0 + 10_000);
    assert.deepEqual(
      made.map((r) => [r.id, r.scheduledBy?.scheduleId]),
      [[dead.runId, t.schedule.id]],
    );

    // Later syncs of both find nothing left to take over.
    t.clock.advance(60_000);
    await Promise.all([a.refresh(), b.refresh()]);
    assert.equal((await t.runsFor(T0 + 10_000)).length, 1);
    assert.deepEqual(
      (await t.fires()).filter((f) => f.outcome === 'claimed'),
      [],
    );
    const fires = await t.fires();
    assert.equal((await t.runs()).length, fires.filter((f) => f.outcome === 'started').length);
    await t.close();
  });

  it('a stale claim whose run was made already is settled started with it: no second run', async () => {
    // skip: were the claim decided again, the dead master's queued run would make it `skipped`.
    const t = await setup('skip', 'run-once');
    const dead = await t.deadClaim(T0 + 10_000);
    await createRun(t.runDeps, await t.jobRow(), dead.runId ?? '', {
      scheduleId: t.schedule.id,
      fireAt: T0 + 10_000,
    });
    t.clock.advance(75_000);
    const loop = t.loop('a'); // the default lease, 60 s
    await loop.start();
    assert.deepEqual(
      { ...(await t.fireOf(T0 + 10_000)), claimedAt: 0 },
      { ...dead, outcome: 'started', claimedBy: 'a', claimedAt: 0 },
    );
    assert.deepEqual(
      (await t.runsFor(T0 + 10_000)).map((r) => r.id),
      [dead.runId],
    );
    await t.close();
  });

  it('a stale claim its master had queued behind an active run waits, and starts once the run ends', async () => {
    const t = await setup('queue', 'run-once');
    const active = await createRun(t.runDeps, await t.jobRow());
    const dead = await t.deadClaim(T0 + 10_000);
    assert.equal(await store.schedules.swapWaiting(t.schedule.id, null, T0 + 10_000), true);
    t.clock.advance(75_000);
    const loop = t.loop('a');
    await loop.start();
    assert.equal((await t.fireOf(T0 + 10_000))?.outcome, 'waiting');
    assert.deepEqual(
      (await t.runs()).map((r) => r.id),
      [active.id],
    );
    await store.runs.transition(active.id, ['queued'], 'cancelled', { endedAt: t.clock.now() });
    await loop.refresh();
    const released = await t.runsFor(T0 + 10_000);
    assert.equal(released.length, 1);
    assert.equal((await t.fireOf(T0 + 10_000))?.runId, released[0]?.id);
    assert.notEqual(released[0]?.id, dead.runId);
    await t.close();
  });

  it('a waiting fire time whose release failed after the slot was cleared is taken over after the lease: one run', async () => {
    const t = await setup('queue', 'run-once');
    const active = await createRun(t.runDeps, await t.jobRow());
    await t.deadClaim(T0 + 10_000, { outcome: 'waiting', runId: null, claimedBy: 'a' });
    assert.equal(await store.schedules.swapWaiting(t.schedule.id, null, T0 + 10_000), true);
    await store.runs.transition(active.id, ['queued'], 'cancelled', { endedAt: t.clock.now() });
    // Master a clears the slot and then fails to make the run (SQL gone, or a kill -9 there).
    const failing = createScheduleLoop({
      store,
      engine,
      clock: t.clock,
      masterId: 'a',
      createRun: () => Promise.reject(new Error('SQL went away')),
      newId: randomUUID,
      logger: silentLogger(),
      options: { syncMs: 3_600_000, misfireGraceMs: 2_000, maxMissed: 1_000 },
    });
    try {
      await failing.start();
    } finally {
      await failing.close();
    }
    assert.equal((await store.schedules.get(t.schedule.id))?.waitingFireAt, null, 'the slot was cleared');
    const left = await t.fireOf(T0 + 10_000);
    assert.deepEqual([left?.outcome, left?.claimedBy], ['claimed', 'a'], 'left as a claim, not as waiting');
    assert.deepEqual(await t.runsFor(T0 + 10_000), []);

    const b = t.loop('b');
    await b.start();
    assert.deepEqual(await t.runsFor(T0 + 10_000), [], 'within the lease it is left to its master');
    t.clock.advance(61_000);
    await b.refresh();
    const made = await t.runsFor(T0 + 10_000);
    assert.equal(made.length, 1);
    assert.deepEqual([(await t.fireOf(T0 + 10_000))?.outcome, made[0]?.id], ['started', left?.runId]);
    await t.close();
  });

  it('while a catch-up is stuck (SQL hanging), later syncs queue one catch-up, not one each', async () => {
    const t = await setup('allow');
    let calls = 0;
    let release = (): void => undefined;
    let stuck: Promise<void> | null = null;
    const hanging = {
      ...store,
      schedules: {
        ...store.schedules,
        // Other tests' schedules share the database: only this one's reads are counted and held.
        lastFire: async (id: string) => {
          if (id === t.schedule.id) {
            calls += 1;
            if (stuck) await stuck;
          }
          return store.schedules.lastFire(id);
        },
      },
    } as SqlStore;
    let tick = (): void => undefined;
    const loop = createScheduleLoop({
      store: hanging,
      engine,
      clock: t.clock,
      masterId: 'a',
      createRun: (job, runId, scheduledBy) => createRun(t.runDeps, job, runId, scheduledBy),
      newId: randomUUID,
      logger: silentLogger(),
      options: { syncMs: 1_000, misfireGraceMs: 2_000, maxMissed: 1_000 },
      timers: {
        setInterval: ((fn: () => void) => {
          tick = fn;
          return { unref() {} } as unknown as NodeJS.Timeout;
        }) as unknown as typeof setInterval,
        clearInterval: (() => undefined) as typeof clearInterval,
      },
    });
    await loop.start();
    // From now on this schedule's SQL reads hang; the interval goes on syncing every second.
    stuck = new Promise<void>((resolve) => (release = resolve));
    calls = 0;
    for (let i = 0; i < 10; i += 1) {
      tick();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(calls, 1, 'only the first reached SQL');
    stuck = null;
    release();
    await loop.refresh();
    await loop.close();
    assert.ok(
      calls <= 3,
      `the stuck one, one queued behind it, the last refresh: ${calls}, not one per sync`,
    );
    await t.close();
  });

  it('a stale claim under misfire skip is recorded missed, with no run', async () => {
    const t = await setup('allow', 'skip');
    const dead = await t.deadClaim(T0 + 10_000, { missed: 4 });
    t.clock.advance(75_000);
    await t.loop('a').start();
    const settled = await t.fireOf(T0 + 10_000);
    assert.deepEqual([settled?.outcome, settled?.runId, settled?.missed], ['missed', null, dead.missed]);
    assert.equal(await store.runs.get(dead.runId ?? ''), null);
    await t.close();
  });

  it('two loops on one database: each fire time is claimed once and makes one run', async () => {
    const t = await setup('allow');
    const [a, b] = [t.loop('a'), t.loop('b')];
    await Promise.all([a.start(), b.start()]);
    for (let i = 0; i < 5; i += 1) {
      t.clock.advance(10_000);
      await Promise.all([a.refresh(), b.refresh()]);
    }
    const fires = await t.fires();
    assert.deepEqual(
      fires.map((f) => f.fireAt - T0),
      [10_000, 20_000, 30_000, 40_000, 50_000],
    );
    assert.equal((await t.runs()).length, 5);
    assert.equal(new Set(fires.map((f) => f.runId)).size, 5);
    await t.close();
  });

  it('misfire run-once: fire times missed while no loop ran make one run at the start', async () => {
    const t = await setup('allow', 'run-once');
    const first = t.loop('a');
    await first.start();
    t.clock.advance(10_000);
    await first.refresh();
    await first.close();
    t.clock.advance(65_000); // six fire times pass with no master
    await t.loop('b').start();
    assert.equal((await t.runs()).length, 2);
    const fires = await t.fires();
    assert.equal(fires.length, 2);
    assert.deepEqual(
      { at: (fires[1]?.fireAt ?? 0) - T0, missed: fires[1]?.missed, outcome: fires[1]?.outcome },
      {
        at: 70_000,
        missed: 5,
        outcome: 'started',
      },
    );
    await t.close();
  });

  it('misfire skip: missed fire times make no run; the next one fires as usual', async () => {
    const t = await setup('allow', 'skip');
    t.clock.advance(65_000);
    const loop = t.loop('a');
    await loop.start();
    assert.equal((await t.runs()).length, 0);
    assert.deepEqual(
      (await t.fires()).map((f) => [f.outcome, f.missed]),
      [['missed', 5]],
    );
    t.clock.advance(5_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 1);
    await t.close();
  });

  it('a paused schedule fires nothing, and resuming does not count the paused time as missed', async () => {
    const t = await setup('allow', 'run-once');
    const loop = t.loop('a');
    await loop.start();
    await store.schedules.setEnabled(t.jobId, false, t.clock.now());
    t.clock.advance(60_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 0);
    await store.schedules.setEnabled(t.jobId, true, t.clock.now());
    await loop.refresh();
    assert.equal((await t.runs()).length, 0);
    t.clock.advance(10_000);
    await loop.refresh();
    assert.equal((await t.runs()).length, 1);
    await t.close();
  });
});
