import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { ack, assertStatsAddUp, type DefineCase, ref, task, tasks, urls } from './frontier-contract-kit.js';

/** settle(): acks, retries, failures, discovered tasks and the checkpoint, in one step. */
export function frontierSettleCases(define: DefineCase): void {
  describe('settle', () => {
    define('ack marks a task done; it is never leased again', async ({ frontier, advance }) => {
      await frontier.push([task('https://a.test/1')]);
      const [lease] = await frontier.lease(1, { leaseMs: 1_000 });
      assert.ok(lease);
      assert.equal(await ack(frontier, lease), 1);
      await advance(3_600_000);
      assert.deepEqual(await frontier.lease(10), []);
      const s = await frontier.stats();
      assert.equal(s.done, 1);
      assert.equal(s.leased, 0);
      assert.equal(s.ready, 0);
    });

    define(
      'a stale ack (after expiry and re-lease) is ignored, never applied twice',
      async ({ frontier, advance }) => {
        await frontier.push([task('https://a.test/1')]);
        const [old] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.ok(old);
        await advance(1_500);
        const [current] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.ok(current);
        assert.equal(current.taskId, old.taskId);
        assert.notEqual(current.leaseId, old.leaseId);

        assert.equal(await ack(frontier, old), 0);
        assert.equal((await frontier.stats()).done, 0);
        assert.equal((await frontier.stats()).leased, 1);

        const twice = await frontier.settle({
          acks: [{ lease: ref(current) }, { lease: ref(current) }],
          retries: [],
          failures: [],
        });
        assert.equal(twice.applied, 1);
        assert.equal(await ack(frontier, current), 0);
        assert.equal(await ack(frontier, old), 0);
        const s = await frontier.stats();
        assert.equal(s.done, 1);
        assert.equal(s.total, 1);
      },
    );

    define('a stale ack pushes none of its discovered tasks', async ({ frontier, advance }) => {
      await frontier.push([task('https://a.test/1')]);
      const [old] = await frontier.lease(1, { leaseMs: 1_000 });
      assert.ok(old);
      await advance(1_500);
      assert.equal((await frontier.lease(1)).length, 1);
      assert.equal(await ack(frontier, old, [task('https://a.test/found')]), 0);
      assert.equal((await frontier.stats()).total, 1);
    });

    define('stale retries and failures are ignored', async ({ frontier, advance }) => {
      await frontier.push([task('https://a.test/1')]);
      const [old] = await frontier.lease(1, { leaseMs: 1_000 });
      assert.ok(old);
      await advance(1_500);
      const [current] = await frontier.lease(1, { leaseMs: 60_000 });
      assert.ok(current);
      const result = await frontier.settle({
        acks: [],
        retries: [{ lease: ref(old), delayMs: 0, error: 'stale' }],
        failures: [{ lease: ref(old), error: 'stale' }],
      });
      assert.equal(result.applied, 0);
      assert.deepEqual(await frontier.stats(), {
        ready: 0,
        delayed: 0,
        leased: 1,
        done: 0,
        failed: 0,
        total: 1,
        cancelled: 0,
      });
    });

    define('retry with delay 0 makes the task ready at once as attempt + 1', async ({ frontier }) => {
      await frontier.push([task('https://a.test/1')]);
      const [first] = await frontier.lease(1);
      assert.ok(first);
      const result = await frontier.settle({
        acks: [],
        retries: [{ lease: ref(first), delayMs: 0, error: 'ECONNRESET' }],
        failures: [],
      });
      assert.deepEqual(result, { applied: 1, accepted: 0 });
      const [second] = await frontier.lease(1);
      assert.ok(second);
      assert.equal(second.taskId, first.taskId);
      assert.equal(second.attempt, 2);
      assert.equal(second.lastError, 'ECONNRESET');
      await frontier.settle({
        acks: [],
        retries: [{ lease: ref(second), delayMs: 0, error: 'http 503' }],
        failures: [],
      });
      const [third] = await frontier.lease(1);
      assert.equal(third?.attempt, 3);
      assert.equal(third?.lastError, 'http 503');
    });

    define(
      'retry with a delay keeps the task out of lease until the clock passes it',
      async ({ frontier, advance }) => {
        await frontier.push([task('https://a.test/1')]);
        const [first] = await frontier.lease(1);
        assert.ok(first);
        await frontier.settle({
          acks: [],
          retries: [{ lease: ref(first), delayMs: 300_000, error: 'timeout' }],
          failures: [],
        });
        assert.deepEqual(await frontier.lease(1), []);
        let s = await frontier.stats();
        assert.equal(s.delayed, 1);
        assert.equal(s.ready, 0);
        await advance(299_000);
        assert.deepEqual(await frontier.lease(1), []);
        await advance(1_001);
        s = await frontier.stats();
        assert.equal(s.delayed, 0);
        assert.equal(s.ready, 1);
        const [second] = await frontier.lease(1);
        assert.equal(second?.attempt, 2);
        assert.equal(second?.lastError, 'timeout');
      },
    );

    define('a failure is final', async ({ frontier, advance }) => {
      await frontier.push([task('https://a.test/1')]);
      const [lease] = await frontier.lease(1, { leaseMs: 1_000 });
      assert.ok(lease);
      const result = await frontier.settle({
        acks: [],
        retries: [],
        failures: [{ lease: ref(lease), error: 'http 404' }],
      });
      assert.equal(result.applied, 1);
      await advance(3_600_000);
      assert.deepEqual(await frontier.lease(10), []);
      assert.deepEqual(await frontier.stats(), {
        ready: 0,
        delayed: 0,
        leased: 0,
        done: 0,
        failed: 1,
        total: 1,
        cancelled: 0,
      });
    });

    define('pushes discovered tasks and stores the checkpoint in the same step', async ({ frontier }) => {
      assert.equal(await frontier.checkpoint(), null);
      await frontier.push(tasks('https://a.test/', 3));
      const [l0, l1, l2] = await frontier.lease(3);
      assert.ok(l0 && l1 && l2);
      const result = await frontier.settle({
        acks: [
          {
            lease: ref(l0),
            discovered: [task('https://a.test/0'), task('https://b.test/x'), task('https://b.test/y')],
          },
          { lease: ref(l1), discovered: [task('https://b.test/x'), task('https://c.test/z')] },
        ],
        retries: [{ lease: ref(l2), delayMs: 0, error: 'reset' }],
        failures: [],
        checkpoint: 'sink:42',
      });
      assert.deepEqual(result, { applied: 3, accepted: 3 });
      assert.equal(await frontier.checkpoint(), 'sink:42');
      const next = await frontier.lease(10);
      assert.deepEqual(urls(next).sort(), [
        'https://a.test/2',
        'https://b.test/x',
        'https://b.test/y',
        'https://c.test/z',
      ]);
      // A settlement without a checkpoint keeps the last one.
      await frontier.settle({ acks: next.map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
      assert.equal(await frontier.checkpoint(), 'sink:42');
      await assertStatsAddUp(frontier);
    });

    define('discovered tasks respect the batch maxTotal', async ({ frontier }) => {
      await frontier.push(tasks('https://a.test/', 2));
      const [l0, l1] = await frontier.lease(2);
      assert.ok(l0 && l1);
      const result = await frontier.settle({
        acks: [
          { lease: ref(l0), discovered: tasks('https://b.test/', 2) },
          { lease: ref(l1), discovered: tasks('https://c.test/', 2) },
        ],
        retries: [],
        failures: [],
        maxTotal: () => 5,
      });
      assert.deepEqual(result, { applied: 2, accepted: 3, capped: true });
      assert.equal((await frontier.stats()).total, 5);
    });

    define(
      'capped only when the cap kept out a URL the frontier did not have, so seen-caches can trust it',
      async ({ frontier }) => {
        await frontier.push(tasks('https://a.test/', 3));
        const [l0, l1, l2] = await frontier.lease(3);
        assert.ok(l0 && l1 && l2);
        // At the cap, but every discovered URL is already known (or repeated): nothing was refused.
        const known = await frontier.settle({
          acks: [{ lease: ref(l0), discovered: [task('https://a.test/1'), task('https://a.test/2')] }],
          retries: [],
          failures: [],
          maxTotal: () => 3,
        });
        assert.deepEqual(known, { applied: 1, accepted: 0 });
        // Room for one: the second new URL is refused, and the result says so.
        const cut = await frontier.settle({
          acks: [
            {
              lease: ref(l1),
              discovered: [task('https://b.test/new'), task('https://b.test/new'), task('https://a.test/0')],
            },
          ],
          retries: [],
          failures: [],
          maxTotal: () => 4,
        });
        assert.deepEqual(cut, { applied: 1, accepted: 1 }, 'a repeat of the accepted URL is not refused');
        const refused = await frontier.settle({
          acks: [{ lease: ref(l2), discovered: [task('https://a.test/0'), task('https://b.test/later')] }],
          retries: [],
          failures: [],
          maxTotal: () => 4,
        });
        assert.deepEqual(refused, { applied: 1, accepted: 0, capped: true });
        // With a higher cap the refused URL is accepted: nothing remembered it as seen.
        assert.deepEqual(urls(await frontier.push([task('https://b.test/later')], { maxTotal: () => 10 })), [
          'https://b.test/later',
        ]);
        await assertStatsAddUp(frontier);
      },
    );

    define('a failure pushes the tasks it discovered in the same step', async ({ frontier }) => {
      await frontier.push(tasks('https://a.test/', 1));
      const [l0] = await frontier.lease(1);
      assert.ok(l0);
      const result = await frontier.settle({
        acks: [],
        retries: [],
        failures: [
          {
            lease: ref(l0),
            error: 'RECORD_UNWRITABLE: too large',
            discovered: [task('https://b.test/1'), task('https://b.test/2')],
          },
        ],
      });
      assert.deepEqual(result, { applied: 1, accepted: 2 });
      const s = await frontier.stats();
      assert.equal(s.failed, 1);
      assert.equal(s.total, 3);
      assert.deepEqual(urls(await frontier.lease(10)).sort(), ['https://b.test/1', 'https://b.test/2']);
    });

    define('a settlement with an invalid task is rejected and applies nothing', async ({ frontier }) => {
      await frontier.push(tasks('https://a.test/', 2));
      const [l0, l1] = await frontier.lease(2);
      assert.ok(l0 && l1);
      await assert.rejects(
        frontier.settle({
          acks: [
            { lease: ref(l0), discovered: [task('https://b.test/ok')] },
            { lease: ref(l1), discovered: [{ ...task('https://b.test/bad'), url: '' }] },
          ],
          retries: [],
          failures: [],
          checkpoint: 'never',
        }),
        { retriable: false },
      );
      assert.equal(await frontier.checkpoint(), null);
      assert.deepEqual(await frontier.stats(), {
        ready: 0,
        delayed: 0,
        leased: 2,
        done: 0,
        failed: 0,
        total: 2,
        cancelled: 0,
      });
      assert.equal(await ack(frontier, l0), 1);
    });
  });
}
