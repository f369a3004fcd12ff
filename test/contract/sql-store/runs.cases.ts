import assert from 'node:assert/strict';
import type { RunState } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, job, rejectsWith, run } from './expect.js';
import { result } from './logs-results.cases.js';

export function runCases(define: DefineCase): void {
  define('runs: create and get keep every field, counters and the settings snapshot', async ({ store }) => {
    const j = await store.jobs.create(job({ settings: { maxPages: 1 } }));
    const r = run(j.id, {
      id: 'r1',
      settings: { maxPages: 2, seeds: ['http://ü.example/'] },
      counters: { done: 5, failed: 2, queued: 9, inFlight: 3, pagesPerSecond: 12.75, notModified: 4 },
      createdAt: 1_700_000_000_123,
      scheduledBy: { scheduleId: 'sched-1', fireAt: 1_700_000_000_000 },
    });
    assert.deepEqual(await store.runs.create(r), r);
    assert.deepEqual(await store.runs.get('r1'), r);
    assert.equal(await store.runs.get('nope'), null);
    // A later edit of the job leaves the run's snapshot alone.
    await store.jobs.update(j.id, { settings: { maxPages: 99 }, updatedAt: 2 });
    assert.deepEqual((await store.runs.get('r1'))?.settings, r.settings);
    await rejectsWith(store.runs.create(run(j.id, { id: 'r1' })), 'SQL_CONFLICT', { field: 'id' });
    await rejectsWith(store.runs.create(run(j.id, { state: 'sleeping' as RunState })), 'SQL_INVALID_VALUE', {
      field: 'state',
    });
  });

  define(
    'runs: transition is compare-and-set; a wrong `from` or an unknown id gives null',
    async ({ store }) => {
      await store.runs.create(run('j', { id: 'cas', state: 'queued' }));
      const started = await store.runs.transition('cas', ['queued'], 'running', {
        startedAt: 100,
        schedulerId: 's1',
        heartbeatAt: 100,
      });
      assert.equal(started?.state, 'running');
      assert.equal(started?.startedAt, 100);
      assert.equal(started?.schedulerId, 's1');
      assert.equal(started?.heartbeatAt, 100);
      assert.equal(started?.endedAt, null);

      assert.equal(await store.runs.transition('cas', ['queued'], 'running'), null);
      assert.equal(await store.runs.transition('cas', ['paused', 'cancelled'], 'running'), null);
      assert.equal(await store.runs.transition('cas', [], 'running'), null);
      assert.equal(await store.runs.transition('missing', ['queued', 'running'], 'paused'), null);
      assert.equal((await store.runs.get('cas'))?.state, 'running');

      const paused = await store.runs.transition('cas', ['running', 'queued'], 'paused');
      assert.equal(paused?.state, 'paused');
      assert.equal(paused?.startedAt, 100, 'fields not in the patch stay');
      const failed = await store.runs.transition('cas', ['paused'], 'failed', {
        endedAt: 200,
        error: 'scheduler lost',
        schedulerId: null,
      });
      assert.deepEqual(
        {
          state: failed?.state,
          endedAt: failed?.endedAt,
          error: failed?.error,
          schedulerId: failed?.schedulerId,
        },
        { state: 'failed', endedAt: 200, error: 'scheduler lost', schedulerId: null },
      );
      const cleared = await store.runs.transition('cas', ['failed'], 'queued', {
        error: null,
        endedAt: null,
      });
      assert.equal(cleared?.error, null);
      assert.equal(cleared?.endedAt, null);
    },
  );

  define('runs: concurrent transitions from the same state: exactly one wins', async ({ store, another }) => {
    await store.runs.create(run('j', { id: 'race', state: 'running' }));
    const other = await another();
    const results = await Promise.all([
      store.runs.transition('race', ['running'], 'cancelled', { endedAt: 1 }),
      other.runs.transition('race', ['running'], 'succeeded', { endedAt: 2 }),
      store.runs.transition('race', ['running'], 'failed', { endedAt: 3 }),
    ]);
    const winners = results.filter((r) => r !== null);
    assert.equal(winners.length, 1);
    assert.equal((await store.runs.get('race'))?.state, winners[0]?.state);
  });

  define('runs: listed newest first, filtered by job and by states, paged', async ({ store }) => {
    const states: RunState[] = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];
    for (let i = 0; i < 12; i += 1) {
      await store.runs.create(
        run(i % 2 === 0 ? 'even' : 'odd', {
          id: `r${String(i).padStart(2, '0')}`,
          state: states[i % 6] ?? 'queued',
          createdAt: 100 + Math.floor(i / 2),
        }),
      );
    }
    const all = await allPages((after) => store.runs.list({ limit: 5, after }));
    assert.deepEqual(
      all.pages.map((p) => p.length),
      [5, 5, 2],
    );
    assert.deepEqual(
      all.items.map((r) => r.id),
      ['r11', 'r10', 'r09', 'r08', 'r07', 'r06', 'r05', 'r04', 'r03', 'r02', 'r01', 'r00'],
    );
    const even = await allPages((after) => store.runs.list({ jobId: 'even', limit: 2, after }));
    assert.deepEqual(
      even.items.map((r) => r.id),
      ['r10', 'r08', 'r06', 'r04', 'r02', 'r00'],
    );
    const active = await store.runs.list({ states: ['running', 'paused'] });
    assert.deepEqual(
      active.items.map((r) => r.id),
      ['r08', 'r07', 'r02', 'r01'],
    );
    const evenActive = await store.runs.list({ jobId: 'even', states: ['queued', 'paused', 'queued'] });
    assert.deepEqual(
      evenActive.items.map((r) => r.id),
      ['r08', 'r06', 'r02', 'r00'],
    );
    assert.deepEqual((await store.runs.list({ states: [] })).items, []);
    assert.deepEqual((await store.runs.list({ jobId: 'nobody' })).items, []);
    assert.equal((await store.runs.list({ states: [...states] })).items.length, 12);
  });

  define(
    'runs: the schedule fire time that made a run is kept by every read (get, list, endedSince, transition)',
    async ({ store }) => {
      const scheduledBy = { scheduleId: 'sched-9', fireAt: 1_767_225_600_000 };
      await store.runs.create(run('j', { id: 'by-schedule', scheduledBy, createdAt: 10 }));
      await store.runs.create(run('j', { id: 'by-api', createdAt: 20 }));
      assert.deepEqual((await store.runs.get('by-schedule'))?.scheduledBy, scheduledBy);
      assert.equal((await store.runs.get('by-api'))?.scheduledBy, null);
      assert.deepEqual(
        (await store.runs.list({ jobId: 'j' })).items.map((r) => [r.id, r.scheduledBy]),
        [
          ['by-api', null],
          ['by-schedule', scheduledBy],
        ],
      );
      const ended = await store.runs.transition('by-schedule', ['queued'], 'cancelled', { endedAt: 30 });
      assert.deepEqual(ended?.scheduledBy, scheduledBy);
      // endedSince reads through the alert statements' own copy of the run columns: the whole row.
      assert.deepEqual(await store.runs.endedSince(30, 10), [ended]);
      await rejectsWith(
        store.runs.create(run('j', { scheduledBy: { scheduleId: 'x'.repeat(200), fireAt: 1 } })),
        'SQL_INVALID_VALUE',
        { field: 'scheduledBy.scheduleId' },
      );
      await rejectsWith(
        store.runs.create(run('j', { scheduledBy: { scheduleId: 's', fireAt: 1.5 } })),
        'SQL_INVALID_VALUE',
        { field: 'scheduledBy.fireAt' },
      );
    },
  );

  define(
    'runs: report sets counters and heartbeat in one batch; unknown ids are ignored',
    async ({ store }) => {
      await store.runs.create(run('j', { id: 'a', state: 'running' }));
      await store.runs.create(run('j', { id: 'b', state: 'running' }));
      await store.runs.report([
        {
          id: 'a',
          schedulerId: 's1',
          counters: { done: 10, failed: 1, queued: 4, inFlight: 2, pagesPerSecond: 3.25, notModified: 6 },
          at: 500,
        },
        {
          id: 'ghost',
          schedulerId: 's1',
          counters: { done: 1, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 },
          at: 500,
        },
        {
          id: 'b',
          schedulerId: 's2',
          counters: { done: 7, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 },
          at: 501,
        },
      ]);
      const a = await store.runs.get('a');
      assert.deepEqual(a?.counters, {
        done: 10,
        failed: 1,
        queued: 4,
        inFlight: 2,
        pagesPerSecond: 3.25,
        notModified: 6,
      });
      assert.equal(a?.schedulerId, 's1');
      assert.equal(a?.heartbeatAt, 500);
      assert.equal(a?.state, 'running');
      assert.equal((await store.runs.get('b'))?.counters.done, 7);
      assert.equal(await store.runs.get('ghost'), null);
      await store.runs.report([]);
    },
  );

  define(
    "runs: a report's stall is kept until a report without one; get, list and endedSince read it",
    async ({ store }) => {
      await store.runs.create(run('j', { id: 'a', state: 'running' }));
      const counters = { done: 3, failed: 0, queued: 9, inFlight: 2, pagesPerSecond: 0, notModified: 0 };
      const reason = 'RabbitMQ blocks publishing (a disk or memory alarm on the broker); ünïcode';
      await store.runs.report([
        { id: 'a', schedulerId: 's1', counters, at: 600, stall: { since: 450, reason } },
      ]);
      assert.deepEqual((await store.runs.get('a'))?.stall, { since: 450, reason });
      assert.deepEqual((await store.runs.list({ jobId: 'j' })).items[0]?.stall, { since: 450, reason });
      // Once outcomes are durable again the next report says nothing of it: the key goes.
      await store.runs.report([{ id: 'a', schedulerId: 's1', counters, at: 601 }]);
      const after = await store.runs.get('a');
      assert.equal(after?.heartbeatAt, 601);
      assert.equal(after !== null && 'stall' in after, false, 'no stall key on a run that is not stalled');
      // A run made with one (a restore, say) keeps it as written.
      const made = await store.runs.create(
        run('j', { id: 'b', state: 'running', stall: { since: 7, reason: 'SINK_DISK_FULL' } }),
      );
      assert.deepEqual(made.stall, { since: 7, reason: 'SINK_DISK_FULL' });
      assert.deepEqual((await store.runs.get('b'))?.stall, { since: 7, reason: 'SINK_DISK_FULL' });
    },
  );

  define(
    'runs: delete takes an ended run and what SQL holds of it, leaves other runs and open ones whole',
    async ({ store }) => {
      const j = await store.jobs.create(job());
      const old = await store.runs.create(run(j.id, { id: 'old', state: 'succeeded', endedAt: 100 }));
      await store.runs.create(run(j.id, { id: 'kept', state: 'failed', endedAt: 200 }));
      await store.runs.create(run(j.id, { id: 'live', state: 'running' }));
      for (const id of ['old', 'kept', 'live']) {
        await store.logs.append([
          {
            runId: id,
            url: `http://127.0.0.1/${id}`,
            code: 'TIMEOUT',
            attempts: 1,
            lastError: 'slow',
            final: true,
            at: 5,
          },
        ]);
        await store.results.upsert([result(`cap-${id}`, { runId: id, jobId: j.id })]);
        await store.seen.claim('frontier', id, ['0123456789abcdef0123456789abcdef'], {
          schedulerId: 's1',
          at: 1,
        });
        await store.seen.reportCounts('frontier', 's1', 1, [{ runId: id, total: 1, done: 1, failed: 0 }]);
      }
      await store.extractFailures.record([
        {
          source: 'file:a:1',
          captureId: 'cap-x',
          runId: 'old',
          url: null,
          code: 'EXTRACT_NOT_HTML',
          reason: 'json',
          at: 1,
        },
      ]);
      await store.schedules.put({
        id: 's1',
        jobId: j.id,
        expression: '0 * * * * *',
        timeZone: 'UTC',
        overlap: 'skip',
        misfire: 'run-once',
        enabled: true,
        waitingFireAt: null,
        createdAt: 1,
        updatedAt: 1,
      });
      const fire = {
        scheduleId: 's1',
        fireAt: 60_000,
        claimedAt: 60_001,
        claimedBy: 'm',
        outcome: 'claimed' as const,
        runId: null,
        missed: 0,
      };
      await store.schedules.claimFire(fire);
      await store.schedules.settleFire('s1', 60_000, 'started', 'old');

      assert.deepEqual(await store.runs.endedBefore(150, 10), ['old']);
      assert.deepEqual(await store.runs.endedBefore(1_000, 10), ['old', 'kept']);
      assert.deepEqual(await store.runs.endedBefore(1_000, 1), ['old']);

      const ended = ['succeeded', 'failed', 'cancelled'] as const;
      assert.equal(await store.runs.delete('live', ended), false, 'a running run is not deleted');
      assert.equal(await store.runs.delete('nope', ended), false);
      assert.equal(await store.runs.delete(old.id, []), false);
      assert.equal(await store.runs.delete(old.id, ended), true);
      assert.equal(await store.runs.delete(old.id, ended), false, 'once');

      assert.equal(await store.runs.get('old'), null);
      assert.deepEqual((await store.logs.list('old')).items, []);
      assert.deepEqual((await store.results.list('old')).items, []);
      assert.deepEqual((await store.extractFailures.list()).items, []);
      assert.equal(await store.seen.count('frontier', 'old'), 0);
      assert.deepEqual((await store.seen.listCounts('frontier')).map((c) => c.runId).sort(), [
        'kept',
        'live',
      ]);
      assert.equal((await store.schedules.lastFire('s1'))?.runId, null, 'the fire stays, without its run');
      for (const id of ['kept', 'live']) {
        assert.ok(await store.runs.get(id));
        assert.equal((await store.logs.list(id)).items.length, 1);
        assert.equal((await store.results.list(id)).items.length, 1);
        assert.equal(await store.seen.count('frontier', id), 1);
      }
      assert.deepEqual(await store.runs.endedBefore(1_000, 10), ['kept']);
    },
  );
}
