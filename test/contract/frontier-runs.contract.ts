import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { Lease } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  type DefineCase,
  type FrontierFixture,
  ack,
  leaseAll,
  ref,
  task,
  tasks,
  urls,
} from './frontier-contract-kit.js';

const inRun = (runId: string) => ({ runId });

/** Leases one task at a time, `n` times (or until none is ready). */
async function leaseOneByOne(frontier: Frontier, n: number): Promise<Lease[]> {
  const got: Lease[] = [];
  for (let i = 0; i < n; i++) {
    const [lease] = await frontier.lease(1);
    if (lease === undefined) break;
    got.push(lease);
  }
  return got;
}

/** For a broker adapter: waits (with a deadline) until the run's queues show `want`. */
async function brokerShows(
  queueState: FrontierFixture['queueState'],
  runId: string,
  want: { ready: number; consumers: number },
): Promise<void> {
  if (queueState === undefined) return;
  let seen: unknown;
  await waitFor(
    async () => {
      seen = await queueState(runId);
      return JSON.stringify(seen) === JSON.stringify(want);
    },
    { timeoutMs: 5_000, message: `the broker to show ${JSON.stringify(want)} for run ${runId}` },
  ).catch(() => assert.deepEqual(seen, want));
}

/** Runs in one frontier: separate seen-sets and limits, pause, resume, cancel, priority levels. */
export function frontierRunCases(define: DefineCase): void {
  describe('runs', () => {
    define('the same URL in two runs is two tasks, each counted in its run', async ({ frontier }) => {
      const url = 'https://a.test/same';
      const accepted = await frontier.push([
        task(url, inRun('r1')),
        task(url, inRun('r2')),
        task(url, inRun('r1')),
      ]);
      assert.deepEqual(
        accepted.map((t) => t.runId),
        ['r1', 'r2'],
      );
      assert.deepEqual(await frontier.push([task(url, inRun('r2'))]), [], 'r2 has seen it');
      const leases = await leaseAll(frontier);
      assert.deepEqual(leases.map((l) => `${l.runId} ${l.url}`).sort(), [`r1 ${url}`, `r2 ${url}`]);
      const r1 = leases.find((l) => l.runId === 'r1');
      assert.ok(r1);
      assert.equal(await ack(frontier, r1), 1);
      assert.equal((await frontier.inspect?.('r1', url))?.state ?? 'done', 'done');
      const r2View = await frontier.inspect?.('r2', url);
      if (r2View !== undefined) assert.notEqual(r2View?.state, 'done');
      assert.equal((await frontier.inspect?.('r3', url)) ?? null, null);
      const [s1, s2, all] = [await frontier.stats('r1'), await frontier.stats('r2'), await frontier.stats()];
      assert.deepEqual([s1.total, s1.done, s1.leased], [1, 1, 0]);
      assert.deepEqual([s2.total, s2.done, s2.leased], [1, 0, 1]);
      assert.deepEqual([all.total, all.done, all.leased], [2, 1, 1]);
      assert.deepEqual(await frontier.runs(), [
        { runId: 'r1', state: 'active' },
        { runId: 'r2', state: 'active' },
      ]);
    });

    define('maxTotal is per run, on push and on discovered tasks', async ({ frontier }) => {
      const maxTotal = (runId: string): number | undefined => (runId === 'small' ? 2 : undefined);
      const pushed = await frontier.push(
        [...tasks('https://a.test/s', 3, inRun('small')), ...tasks('https://a.test/b', 3, inRun('big'))],
        { maxTotal },
      );
      assert.equal(pushed.filter((t) => t.runId === 'small').length, 2);
      assert.equal(pushed.filter((t) => t.runId === 'big').length, 3);
      const leases = await leaseAll(frontier);
      const small = leases.find((l) => l.runId === 'small');
      const big = leases.find((l) => l.runId === 'big');
      assert.ok(small && big);
      const result = await frontier.settle({
        acks: [
          { lease: ref(small), discovered: tasks('https://a.test/s-more', 2, inRun('small')) },
          { lease: ref(big), discovered: tasks('https://a.test/b-more', 2, inRun('big')) },
        ],
        retries: [],
        failures: [],
        maxTotal,
      });
      assert.deepEqual(result, { applied: 2, accepted: 2, capped: true });
      assert.equal((await frontier.stats('small')).total, 2);
      assert.equal((await frontier.stats('big')).total, 5);
    });

    define('a paused run is not leased, keeps its work, and comes back on resume', async (ctx) => {
      const { frontier } = ctx;
      await frontier.pauseRun('p');
      await frontier.push([
        ...tasks('https://p.test/', 3, inRun('p')),
        ...tasks('https://q.test/', 2, inRun('q')),
      ]);
      for (let i = 0; i < 3; i++) {
        assert.deepEqual(
          (await frontier.lease(10)).map((l) => l.runId),
          i === 0 ? ['q', 'q'] : [],
          'only the active run is leased',
        );
      }
      assert.equal((await frontier.stats('p')).ready, 3);
      assert.deepEqual(await frontier.runs(), [
        { runId: 'p', state: 'paused' },
        { runId: 'q', state: 'active' },
      ]);
      // No consumer: the broker delivers nothing, so nothing is handed back and forth.
      await brokerShows(ctx.queueState, 'p', { ready: 3, consumers: 0 });
      await frontier.pauseRun('p'); // again: nothing changes
      await frontier.resumeRun('p');
      const back = await leaseAll(frontier);
      assert.deepEqual(urls(back).sort(), urls(tasks('https://p.test/', 3)));
      assert.ok(
        back.every((l) => l.attempt === 1),
        'pausing counts no attempt',
      );
    });

    define('pausing hands back what was waiting, and leases already out settle as usual', async (ctx) => {
      const { frontier } = ctx;
      await frontier.push(tasks('https://p.test/', 4, inRun('p')));
      const [out] = await frontier.lease(1);
      assert.ok(out);
      await frontier.pauseRun('p');
      assert.deepEqual(await frontier.lease(10), []);
      assert.equal(await ack(frontier, out, tasks('https://p.test/more', 1, inRun('p'))), 1);
      const s = await frontier.stats('p');
      assert.deepEqual([s.total, s.done, s.ready, s.leased], [5, 1, 4, 0]);
      await brokerShows(ctx.queueState, 'p', { ready: 4, consumers: 0 });
    });

    define(
      'cancel removes the queued and delayed work, counts it, and ignores late outcomes',
      async (ctx) => {
        const { frontier } = ctx;
        await frontier.push([
          ...tasks('https://c.test/', 4, inRun('c')),
          task('https://o.test/1', inRun('other')),
        ]);
        const leases = (await leaseAll(frontier)).filter((l) => l.runId === 'c');
        const [kept, retried, failed, back] = leases;
        assert.ok(kept && retried && failed && back);
        // One waits for a retry delay, one goes back to the queue: both are removed by the cancel.
        await frontier.settle({
          acks: [],
          retries: [{ lease: ref(retried), delayMs: 5_000, error: 'e' }],
          failures: [],
        });
        await frontier.release([ref(back)]);
        assert.equal(await frontier.cancelRun('c'), 2);
        assert.equal(await frontier.cancelRun('c'), 0, 'cancelling again removes nothing');
        // Late outcomes of leases still out: applied as far as they finish the task, no new work.
        const late = await frontier.settle({
          acks: [{ lease: ref(kept), discovered: tasks('https://c.test/new', 2, inRun('c')) }],
          retries: [],
          failures: [{ lease: ref(failed), error: 'gone' }],
        });
        assert.deepEqual(late, { applied: 2, accepted: 0 });
        assert.deepEqual(await frontier.push([task('https://c.test/late', inRun('c'))]), []);
        await ctx.advance(6_000);
        assert.deepEqual(await leaseAll(frontier), [], 'nothing of the cancelled run comes back');
        const s = await frontier.stats('c');
        assert.deepEqual(
          [s.total, s.done, s.failed, s.cancelled, s.ready, s.delayed, s.leased],
          [4, 1, 1, 2, 0, 0, 0],
        );
        await assert.rejects(frontier.pauseRun('c'), { code: 'FRONTIER_RUN_CANCELLED' });
        await assert.rejects(frontier.resumeRun('c'), { code: 'FRONTIER_RUN_CANCELLED', status: 409 });
        assert.equal((await frontier.stats('other')).leased, 1, 'the other run is untouched');
        const view = await frontier.inspect?.('c', back.url);
        if (view !== undefined) assert.equal(view?.state, 'cancelled');
      },
    );

    define('requeue puts a failed URL back once, as a fresh task, past the seen-set', async (ctx) => {
      const { frontier } = ctx;
      if (frontier.requeue === undefined) return;
      await frontier.push(tasks('https://q.test/', 2, inRun('q')));
      const [failed, done] = await leaseAll(frontier);
      assert.ok(failed && done);
      await frontier.settle({
        acks: [{ lease: ref(done) }],
        retries: [],
        failures: [{ lease: ref(failed), error: 'gone' }],
      });
      assert.equal(await frontier.requeue('q', done.url), false, 'a done URL is not requeued');
      assert.equal(await frontier.requeue('q', 'https://q.test/never'), false);
      assert.equal(await frontier.requeue('other', failed.url), false, 'per run');
      assert.equal(await frontier.requeue('q', failed.url), true);
      assert.equal(await frontier.requeue('q', failed.url), false, 'queued already: once');
      // A broker delivers the new message when it has it: lease until it comes (or the deadline).
      let again: Lease | undefined;
      await waitFor(
        async () => {
          again ??= (await leaseAll(frontier))[0];
          return again !== undefined;
        },
        { timeoutMs: 5_000, message: 'the requeued URL is leased' },
      );
      assert.equal(again?.url, failed.url);
      assert.equal(again?.attempt, 1, 'a fresh attempt');
      let s = await frontier.stats('q');
      assert.deepEqual([s.total, s.done, s.failed, s.leased], [2, 1, 0, 1]);
      assert.ok(again);
      await frontier.settle({ acks: [{ lease: ref(again) }], retries: [], failures: [] });
      s = await frontier.stats('q');
      assert.deepEqual([s.total, s.done, s.failed, s.leased, s.ready], [2, 2, 0, 0, 0]);
      await frontier.cancelRun('q');
      assert.equal(await frontier.requeue('q', failed.url), false, 'not in a cancelled run');
    });

    define('a cancelled run drops the retry and the release of a lease still out', async (ctx) => {
      const { frontier } = ctx;
      await frontier.push(tasks('https://c.test/', 2, inRun('c')));
      const [a, b] = await frontier.lease(2);
      assert.ok(a && b);
      assert.equal(await frontier.cancelRun('c'), 0, 'both are leased: nothing queued to remove');
      await frontier.settle({
        acks: [],
        retries: [{ lease: ref(a), delayMs: 0, error: 'again' }],
        failures: [],
      });
      await frontier.release([ref(b)]);
      assert.deepEqual(await leaseAll(frontier), []);
      const s = await frontier.stats('c');
      assert.deepEqual([s.total, s.cancelled, s.ready, s.leased], [2, 2, 0, 0]);
    });

    define(
      'a retired run leaves runs() and the sum of stats(), keeps its counters, takes no more tasks',
      async (ctx) => {
        const { frontier } = ctx;
        if (frontier.retireRun === undefined) return ctx.t.skip('the adapter does not retire runs');
        await frontier.push([
          ...tasks('https://o.test/', 2, inRun('over')),
          task('https://l.test/1', inRun('live')),
        ]);
        const over = (await leaseAll(frontier)).filter((l) => l.runId === 'over');
        for (const lease of over) await ack(frontier, lease);
        await frontier.retireRun('over');
        await frontier.retireRun('over');
        await frontier.retireRun('unknown');
        assert.deepEqual(
          (await frontier.runs()).map((r) => r.runId),
          ['live'],
        );
        const s = await frontier.stats('over');
        assert.deepEqual([s.total, s.done, s.ready, s.leased], [2, 2, 0, 0], 'its counters kept');
        assert.equal((await frontier.stats()).total, 1, 'the sum covers the runs served');
        assert.deepEqual(await frontier.push([task('https://o.test/new', inRun('over'))]), []);
        if (ctx.reopen === undefined) return;
        const after = await ctx.reopen();
        assert.deepEqual(
          (await after.runs()).map((r) => r.runId),
          ['live'],
          'still retired after a restart',
        );
        assert.deepEqual(
          [(await after.stats('over')).total, (await after.stats('over')).done],
          [2, 2],
          'its counters kept across a restart',
        );
      },
    );

    define('run ids are checked', async ({ frontier }) => {
      await assert.rejects(frontier.push([task('https://a.test/', inRun('no spaces'))]), {
        code: 'FRONTIER_BAD_TASK',
      });
      await assert.rejects(frontier.pauseRun('x'.repeat(65)), { code: 'FRONTIER_BAD_RUN_ID' });
      await assert.rejects(frontier.stats('a.b'), { code: 'FRONTIER_BAD_RUN_ID' });
    });

    define('pause and cancel survive a restart', async (ctx) => {
      if (ctx.reopen === undefined) return ctx.t.skip('the adapter cannot reopen');
      await ctx.frontier.push([
        ...tasks('https://p.test/', 2, inRun('p')),
        ...tasks('https://c.test/', 2, inRun('c')),
        ...tasks('https://a.test/', 2, inRun('a')),
      ]);
      await ctx.frontier.pauseRun('p');
      assert.equal(await ctx.frontier.cancelRun('c'), 2);
      const after = await ctx.reopen();
      assert.deepEqual(await after.runs(), [
        { runId: 'a', state: 'active' },
        { runId: 'c', state: 'cancelled' },
        { runId: 'p', state: 'paused' },
      ]);
      assert.deepEqual(
        (await leaseAll(after)).map((l) => l.runId),
        ['a', 'a'],
      );
      assert.deepEqual(await after.push([task('https://c.test/9', inRun('c'))]), []);
      await after.resumeRun('p');
      assert.deepEqual(
        (await leaseAll(after)).map((l) => l.runId),
        ['p', 'p'],
      );
    });
  });

  describe('priority levels', () => {
    define('the top level goes first; within a level, oldest first', async ({ frontier }) => {
      await frontier.push([
        task('https://a.test/low1', { priority: 0 }),
        task('https://a.test/high1', { priority: 3 }),
      ]);
      await frontier.push([
        task('https://a.test/high2', { priority: 3 }),
        task('https://a.test/low2', { priority: 0 }),
      ]);
      assert.deepEqual(urls(await leaseOneByOne(frontier, 4)), [
        'https://a.test/high1',
        'https://a.test/high2',
        'https://a.test/low1',
        'https://a.test/low2',
      ]);
    });

    define('no level starves: of 15 leases with every level busy, 8, 4, 2 and 1', async ({ frontier }) => {
      for (let level = 0; level < 4; level++) {
        await frontier.push(tasks(`https://l${level}.test/`, 20, { priority: level }));
      }
      const got = await leaseOneByOne(frontier, 15);
      const per = [0, 0, 0, 0];
      for (const lease of got) per[lease.priority] = (per[lease.priority] ?? 0) + 1;
      assert.deepEqual(per, [1, 2, 4, 8]);
      // One call for many takes the same shares.
      const batch = await frontier.lease(15);
      const perBatch = [0, 0, 0, 0];
      for (const lease of batch) perBatch[lease.priority] = (perBatch[lease.priority] ?? 0) + 1;
      assert.deepEqual(perBatch, [1, 2, 4, 8]);
    });

    define('levels are shared by runs: a lower-priority run still gets its share', async ({ frontier }) => {
      await frontier.push(tasks('https://vip.test/', 30, { runId: 'vip', priority: 3 }));
      await frontier.push(tasks('https://bulk.test/', 30, { runId: 'bulk', priority: 0 }));
      const got = await leaseOneByOne(frontier, 18);
      assert.equal(got[0]?.runId, 'vip');
      assert.equal(got.filter((l) => l.runId === 'bulk').length, 2, '1 in 9 with two levels busy');
    });

    define('levels are clamped into 0..3', async ({ frontier }) => {
      await frontier.push([
        task('https://a.test/neg', { priority: -5 }),
        task('https://a.test/big', { priority: 42 }),
      ]);
      const got = await leaseAll(frontier);
      assert.deepEqual(
        got.map((l) => [l.url, l.priority]),
        [
          ['https://a.test/big', 3],
          ['https://a.test/neg', 0],
        ],
      );
    });
  });
}
