import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalRunControl } from '../../shared/adapters/run-control/local-run-control.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { MisfirePolicy, OverlapPolicy, SqlStore } from '../../shared/ports/sql-store.js';
import { createRun } from '../../master/api/run-actions.js';
import { nodeCronEngine } from '../../master/schedules/cron-engine.js';
import { decideOverlap, planFires } from '../../master/schedules/fire-plan.js';
import { createScheduleLoop, type ScheduleLoop } from '../../master/schedules/schedule-loop.js';
import { FakeClock } from '../helpers/fake-clock.js';

const engine = nodeCronEngine();
/** A whole minute in 2026, so that fire times fall on round numbers. */
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('schedules: fire plan', () => {
  it('on-time fire times fire; missed ones fold into one run (run-once) or into none (skip)', () => {
    const due = [T0, T0 + 10_000, T0 + 20_000, T0 + 30_000];
    const now = T0 + 30_500;
    assert.deepEqual(planFires({ due, now, graceMs: 5_000, misfire: 'run-once' }), [
      { fireAt: T0 + 20_000, kind: 'run', folded: 2 },
      { fireAt: T0 + 30_000, kind: 'run', folded: 0 },
    ]);
    assert.deepEqual(planFires({ due, now, graceMs: 5_000, misfire: 'skip' }), [
      { fireAt: T0 + 20_000, kind: 'missed', folded: 2 },
      { fireAt: T0 + 30_000, kind: 'run', folded: 0 },
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
    const loop = (masterId: string): ScheduleLoop => {
      const made = createScheduleLoop({
        store,
        engine,
        clock,
        masterId,
        createRun: (job, runId) =>
          createRun({ store, runControl, clock, newId: randomUUID, logger: silentLogger() }, job, runId),
        newId: randomUUID,
        logger: silentLogger(),
        options: { syncMs: 3_600_000, misfireGraceMs: 2_000, maxMissed: 1_000 },
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
    return { clock, jobId, schedule, loop, runs, fires, close };
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
    assert.equal((await t.runs()).length, 3);
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
