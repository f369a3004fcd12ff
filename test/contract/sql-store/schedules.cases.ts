import assert from 'node:assert/strict';
import type { FireRow, OverlapPolicy, ScheduleRow } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, rejectsWith } from './expect.js';

function schedule(fields: Partial<ScheduleRow> = {}): ScheduleRow {
  return {
    id: 's1',
    jobId: 'j1',
    expression: '*/5 * * * * *',
    timeZone: 'Europe/Paris',
    overlap: 'skip',
    misfire: 'run-once',
    enabled: true,
    waitingFireAt: null,
    createdAt: 1_000,
    updatedAt: 1_000,
    ...fields,
  };
}

function fire(fields: Partial<FireRow> = {}): FireRow {
  return {
    scheduleId: 's1',
    fireAt: 60_000,
    claimedAt: 60_010,
    claimedBy: 'master-a',
    outcome: 'claimed',
    runId: null,
    missed: 0,
    ...fields,
  };
}

export function scheduleCases(define: DefineCase): void {
  define('schedules: put creates, put again replaces (same id), pause, delete', async ({ store }) => {
    const made = await store.schedules.put(schedule());
    assert.deepEqual(made, schedule());
    assert.deepEqual(await store.schedules.get('s1'), made);
    assert.deepEqual(await store.schedules.getByJob('j1'), made);
    assert.equal(await store.schedules.getByJob('other'), null);

    const replaced = await store.schedules.put(
      schedule({
        id: 'ignored',
        expression: '0 3 * * *',
        timeZone: 'UTC',
        overlap: 'queue',
        misfire: 'skip',
        updatedAt: 2_000,
      }),
    );
    assert.deepEqual(
      replaced,
      schedule({
        expression: '0 3 * * *',
        timeZone: 'UTC',
        overlap: 'queue',
        misfire: 'skip',
        updatedAt: 2_000,
      }),
    );
    assert.equal(await store.schedules.get('ignored'), null);

    const paused = await store.schedules.setEnabled('j1', false, 3_000);
    assert.equal(paused?.enabled, false);
    assert.equal(paused?.updatedAt, 3_000);
    assert.equal((await store.schedules.setEnabled('j1', true, 4_000))?.enabled, true);
    assert.equal(await store.schedules.setEnabled('nope', true, 4_000), null);

    assert.equal(await store.schedules.claimFire(fire()), true);
    assert.equal(await store.schedules.deleteByJob('j1'), true);
    assert.equal(await store.schedules.deleteByJob('j1'), false);
    assert.equal(await store.schedules.getByJob('j1'), null);
    assert.equal(await store.schedules.lastFire('s1'), null, 'its fire times went with it');
  });

  define(
    'schedules: unknown policies are refused; a second schedule id for another job conflicts',
    async ({ store }) => {
      await rejectsWith(
        store.schedules.put(schedule({ overlap: 'never' as OverlapPolicy })),
        'SQL_INVALID_VALUE',
        {
          field: 'overlap',
        },
      );
      await store.schedules.put(schedule());
      await rejectsWith(store.schedules.put(schedule({ jobId: 'j2' })), 'SQL_CONFLICT');
    },
  );

  define('schedules: listed oldest first, paged', async ({ store }) => {
    for (let i = 0; i < 5; i += 1) {
      await store.schedules.put(schedule({ id: `s${i}`, jobId: `j${i}`, createdAt: 10 - i }));
    }
    const { pages, items } = await allPages((after) => store.schedules.list({ limit: 2, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      items.map((s) => s.id),
      ['s4', 's3', 's2', 's1', 's0'],
    );
  });

  define('schedules: a fire time is claimed once, settled, and the last one is found', async ({ store }) => {
    await store.schedules.put(schedule());
    assert.equal(await store.schedules.lastFire('s1'), null);
    assert.equal(await store.schedules.claimFire(fire()), true);
    assert.equal(await store.schedules.claimFire(fire({ claimedBy: 'master-b' })), false);
    assert.equal(await store.schedules.claimFire(fire({ fireAt: 65_000, missed: 2 })), true);
    await store.schedules.settleFire('s1', 65_000, 'started', 'run-1');
    assert.deepEqual(
      await store.schedules.lastFire('s1'),
      fire({ fireAt: 65_000, missed: 2, outcome: 'started', runId: 'run-1' }),
    );
    assert.equal((await store.schedules.listFires('s1')).items[1]?.claimedBy, 'master-a');
  });

  define(
    'schedules: two stores claiming the same fire times at once: each claimed by exactly one',
    async ({ store, another }) => {
      await store.schedules.put(schedule());
      const other = await another();
      const times = Array.from({ length: 20 }, (_, i) => 100_000 + i * 5_000);
      const results = await Promise.all(
        times.flatMap((fireAt) => [
          store.schedules.claimFire(fire({ fireAt, claimedBy: 'a' })),
          other.schedules.claimFire(fire({ fireAt, claimedBy: 'b' })),
        ]),
      );
      for (let i = 0; i < times.length; i += 1) {
        assert.equal(Number(results[2 * i]) + Number(results[2 * i + 1]), 1, `fire time ${times[i]}`);
      }
      const { items } = await allPages((after) => store.schedules.listFires('s1', { limit: 7, after }));
      assert.deepEqual(
        items.map((f) => f.fireAt),
        [...times].reverse(),
      );
    },
  );

  define(
    'schedules: a claim names its run; stale claims are those still claimed, older than the lease, in the window',
    async ({ store }) => {
      await store.schedules.put(schedule());
      await store.schedules.put(schedule({ id: 's2', jobId: 'j2' }));
      const claims = [
        fire({ fireAt: 10_000, claimedAt: 10_005, runId: 'run-too-old' }),
        fire({ fireAt: 20_000, claimedAt: 20_005, runId: 'run-a', missed: 3 }),
        fire({ fireAt: 30_000, claimedAt: 30_005, runId: 'run-settled' }),
        fire({ fireAt: 40_000, claimedAt: 40_005, runId: null }),
        fire({ fireAt: 50_000, claimedAt: 50_005, runId: 'run-fresh' }),
        fire({ scheduleId: 's2', fireAt: 20_000, claimedAt: 20_005, runId: 'run-other' }),
      ];
      // Claimed out of order: the answer is by fire time all the same.
      for (const c of [...claims].reverse()) assert.equal(await store.schedules.claimFire(c), true);
      assert.deepEqual(
        await store.schedules.lastFire('s1'),
        claims[4],
        'the run id is stored with the claim',
      );
      await store.schedules.settleFire('s1', 30_000, 'started', 'run-settled');

      const stale = await store.schedules.staleClaims('s1', 50_000, 15_000, 10);
      assert.deepEqual(stale, [claims[1], claims[3]]);
      assert.deepEqual(
        (await store.schedules.staleClaims('s1', 50_006, 0, 10)).map((f) => f.fireAt),
        [10_000, 20_000, 40_000, 50_000],
        'claimed before is strict; since is inclusive',
      );
      assert.deepEqual(
        (await store.schedules.staleClaims('s1', 50_006, 20_000, 1)).map((f) => f.fireAt),
        [20_000],
        'at most limit, oldest fire time first',
      );
      assert.deepEqual(await store.schedules.staleClaims('s1', 10_005, 0, 10), []);
      assert.deepEqual(await store.schedules.staleClaims('nope', 99_000, 0, 10), []);
    },
  );

  define(
    'schedules: reclaiming a stale claim is a compare-and-set: one winner, never a settled or fresh claim',
    async ({ store, another }) => {
      await store.schedules.put(schedule());
      await store.schedules.claimFire(fire({ fireAt: 20_000, claimedAt: 20_005, runId: 'run-a', missed: 2 }));
      await store.schedules.claimFire(fire({ fireAt: 30_000, claimedAt: 30_005, runId: 'run-b' }));
      await store.schedules.claimFire(fire({ fireAt: 40_000, claimedAt: 45_000, runId: 'run-c' }));
      await store.schedules.settleFire('s1', 30_000, 'skipped', null);

      assert.equal(
        await store.schedules.reclaimFire('s1', 30_000, 40_000, 90_000, 'master-b'),
        false,
        'settled',
      );
      assert.equal(
        await store.schedules.reclaimFire('s1', 40_000, 40_000, 90_000, 'master-b'),
        false,
        'fresh',
      );
      assert.equal(
        await store.schedules.reclaimFire('s1', 99_000, 40_000, 90_000, 'master-b'),
        false,
        'absent',
      );

      const other = await another();
      const results = await Promise.all([
        store.schedules.reclaimFire('s1', 20_000, 40_000, 90_000, 'master-b'),
        other.schedules.reclaimFire('s1', 20_000, 40_000, 90_001, 'master-c'),
        store.schedules.reclaimFire('s1', 20_000, 40_000, 90_002, 'master-d'),
      ]);
      assert.equal(results.filter(Boolean).length, 1, JSON.stringify(results));
      const winner = ['master-b', 'master-c', 'master-d'][results.indexOf(true)];
      const [taken] = (await store.schedules.listFires('s1')).items.filter((f) => f.fireAt === 20_000);
      assert.deepEqual(taken, {
        ...fire({ fireAt: 20_000, runId: 'run-a', missed: 2 }),
        claimedAt: 90_000 + results.indexOf(true),
        claimedBy: winner,
      });
      assert.deepEqual(await store.schedules.staleClaims('s1', 40_000, 0, 10), [], 'no longer stale');
      assert.equal(
        await store.schedules.reclaimFire('s1', 20_000, 40_000, 95_000, 'master-e'),
        false,
        'taken over once',
      );
    },
  );

  define('schedules: the waiting fire time is a compare-and-set', async ({ store }) => {
    await store.schedules.put(schedule({ overlap: 'queue' }));
    assert.equal(await store.schedules.swapWaiting('s1', null, 5_000), true);
    assert.equal(await store.schedules.swapWaiting('s1', null, 6_000), false, 'one waits already');
    assert.equal(await store.schedules.swapWaiting('s1', 6_000, null), false, 'not the one waiting');
    assert.equal((await store.schedules.get('s1'))?.waitingFireAt, 5_000);
    assert.equal(await store.schedules.swapWaiting('s1', 5_000, null), true);
    assert.equal((await store.schedules.get('s1'))?.waitingFireAt, null);
  });
}
