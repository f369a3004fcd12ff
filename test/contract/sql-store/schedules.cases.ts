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
