import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTask } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';
import {
  ack,
  assertStatsAddUp,
  caseDefiner,
  type MakeFrontier,
  task,
  tasks,
  urls,
} from './frontier-contract-kit.js';
import { frontierResumeCases } from './frontier-resume.contract.js';
import { frontierRunCases } from './frontier-runs.contract.js';
import { frontierSettleCases } from './frontier-settle.contract.js';

export type { FrontierFixture, MakeFrontier } from './frontier-contract-kit.js';

/**
 * The Frontier port's contract, run over every adapter. It tests port semantics only (see
 * shared/ports/frontier.ts); crash-resume cases run when the adapter's fixture offers `reopen`.
 * Time is the fake clock: adapters must read lease expiry and retry due times from it. An adapter
 * whose delays also run on real time (RabbitMQ's TTLs) gives its fixture an `elapse` that waits for
 * them after each `advance`, with a short delay bucket.
 */
export function frontierContract(name: string, makeFrontier: MakeFrontier): void {
  const define = caseDefiner(makeFrontier, () => new FakeClock());

  describe(`${name}: frontier contract`, () => {
    describe('push', () => {
      define('accepts a URL once, within a call and across calls', async ({ frontier }) => {
        const first = await frontier.push([
          task('https://a.test/1'),
          task('https://a.test/2'),
          task('https://a.test/1'),
        ]);
        assert.deepEqual(urls(first), ['https://a.test/1', 'https://a.test/2']);
        const second = await frontier.push([task('https://a.test/2'), task('https://a.test/3')]);
        assert.deepEqual(urls(second), ['https://a.test/3']);
        assert.equal((await frontier.stats()).total, 3);
      });

      define('returns the accepted tasks as given', async ({ frontier }) => {
        const t = task('https://a.test/x', { depth: 3, priority: 2, parentUrl: 'https://a.test/' });
        assert.deepEqual(await frontier.push([t]), [t]);
        const [lease] = await frontier.lease(1);
        assert.ok(lease);
        assert.equal(lease.url, t.url);
        assert.equal(lease.host, 'a.test');
        assert.equal(lease.depth, 3);
        assert.equal(lease.priority, 2);
        assert.equal(lease.runId, 'default');
        assert.equal(lease.parentUrl, 'https://a.test/');
        assert.equal(lease.attempt, 1);
        assert.equal(lease.lastError, null);
      });

      define('keeps a task kind and lastmod through leases and retries', async ({ frontier }) => {
        const sitemap = task('https://a.test/sitemap.xml', { kind: 'sitemap' });
        const page = task('https://a.test/p', { lastmod: '2026-11-01T10:00:00Z' });
        const plain = task('https://a.test/q');
        await frontier.push([sitemap, page, plain]);
        const leases = await frontier.lease(3);
        const byUrl = new Map(leases.map((l) => [l.url, l]));
        assert.equal(byUrl.get(sitemap.url)?.kind, 'sitemap');
        assert.equal(byUrl.get(page.url)?.lastmod, '2026-11-01T10:00:00Z');
        assert.equal(byUrl.get(plain.url)?.kind ?? 'page', 'page');
        assert.equal(byUrl.get(plain.url)?.lastmod ?? null, null);
        await frontier.settle({
          acks: [],
          retries: leases.map((lease) => ({ lease, delayMs: 0, error: 'again' })),
          failures: [],
        });
        const again = new Map((await frontier.lease(3)).map((l) => [l.url, l]));
        assert.equal(again.get(sitemap.url)?.kind, 'sitemap');
        assert.equal(again.get(sitemap.url)?.attempt, 2);
        assert.equal(again.get(page.url)?.lastmod, '2026-11-01T10:00:00Z');
      });

      define('rejects a task with an unknown kind or an oversized lastmod', async ({ frontier }) => {
        const bad = { ...task('https://a.test/k'), kind: 'video' } as unknown as NewTask;
        await assert.rejects(frontier.push([bad]), { code: 'FRONTIER_BAD_TASK' });
        await assert.rejects(frontier.push([task('https://a.test/l', { lastmod: 'x'.repeat(65) })]), {
          code: 'FRONTIER_BAD_TASK',
        });
        assert.equal((await frontier.stats()).total, 0);
      });

      define('stops accepting at maxTotal, counting every URL ever accepted', async ({ frontier }) => {
        assert.equal((await frontier.push(tasks('https://a.test/', 5), { maxTotal: () => 3 })).length, 3);
        assert.deepEqual(await frontier.push([task('https://a.test/new')], { maxTotal: () => 3 }), []);
        const [lease] = await frontier.lease(1);
        assert.ok(lease);
        assert.equal(await ack(frontier, lease), 1);
        // Done tasks still count: the limit is on URLs accepted, not on URLs pending.
        assert.deepEqual(await frontier.push([task('https://a.test/new')], { maxTotal: () => 3 }), []);
        assert.equal((await frontier.push([task('https://a.test/new')], { maxTotal: () => 4 })).length, 1);
        assert.equal((await frontier.stats()).total, 4);
      });

      define('does not count duplicates against maxTotal', async ({ frontier }) => {
        await frontier.push([task('https://a.test/1')]);
        const accepted = await frontier.push([task('https://a.test/1'), task('https://a.test/2')], {
          maxTotal: () => 2,
        });
        assert.deepEqual(urls(accepted), ['https://a.test/2']);
      });
    });

    describe('lease', () => {
      define('returns at most max tasks, and none for max 0', async ({ frontier }) => {
        await frontier.push(tasks('https://a.test/', 5));
        assert.deepEqual(await frontier.lease(0), []);
        assert.equal((await frontier.lease(2)).length, 2);
        assert.equal((await frontier.lease(10)).length, 3);
        assert.deepEqual(await frontier.lease(10), []);
      });

      define('skips tasks on excludeHosts and leaves them ready', async ({ frontier }) => {
        await frontier.push([task('https://a.test/1'), task('https://b.test/1'), task('https://c.test/1')]);
        const got = await frontier.lease(10, { excludeHosts: ['a.test', 'c.test'] });
        assert.deepEqual(urls(got), ['https://b.test/1']);
        assert.deepEqual(urls(await frontier.lease(10)).sort(), ['https://a.test/1', 'https://c.test/1']);
      });

      define('does not lease a leased task again while its lease lasts', async ({ frontier, advance }) => {
        await frontier.push([task('https://a.test/1')]);
        assert.equal((await frontier.lease(1, { leaseMs: 10_000 })).length, 1);
        await advance(9_000);
        assert.deepEqual(await frontier.lease(1), []);
      });

      define(
        'puts a task back when its lease expires, same attempt, new lease id',
        async ({ frontier, advance }) => {
          await frontier.push([task('https://a.test/1')]);
          const [first] = await frontier.lease(1, { leaseMs: 1_000 });
          assert.ok(first);
          await advance(500);
          assert.deepEqual(await frontier.lease(1), []);
          assert.equal((await frontier.stats()).leased, 1);
          await advance(600);
          const s = await frontier.stats();
          assert.equal(s.leased, 0);
          assert.equal(s.ready, 1);
          const [again] = await frontier.lease(1, { leaseMs: 1_000 });
          assert.ok(again);
          assert.equal(again.taskId, first.taskId);
          assert.equal(again.attempt, 1);
          assert.notEqual(again.leaseId, first.leaseId);
        },
      );

      define('renew keeps a lease alive past its first expiry', async ({ frontier, advance }) => {
        await frontier.push([task('https://a.test/1')]);
        const [lease] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.ok(lease);
        await advance(800);
        await frontier.renew([{ taskId: lease.taskId, leaseId: lease.leaseId }], 1_000);
        await advance(800);
        assert.deepEqual(await frontier.lease(1), []);
        assert.equal(await ack(frontier, lease), 1);
      });

      define('renew of a stale lease does nothing', async ({ frontier, advance }) => {
        await frontier.push([task('https://a.test/1')]);
        const [old] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.ok(old);
        await advance(1_500);
        const [current] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.ok(current);
        await frontier.renew([{ taskId: old.taskId, leaseId: old.leaseId }], 60_000);
        await advance(1_500);
        const [third] = await frontier.lease(1, { leaseMs: 1_000 });
        assert.equal(third?.taskId, old.taskId);
      });

      define('release puts a task back at once with the same attempt', async ({ frontier }) => {
        await frontier.push([task('https://a.test/1'), task('https://a.test/2')]);
        const leases = await frontier.lease(2);
        const first = leases[0];
        assert.ok(first);
        await frontier.release([{ taskId: first.taskId, leaseId: first.leaseId }]);
        const s = await frontier.stats();
        assert.equal(s.ready, 1);
        assert.equal(s.leased, 1);
        const [again] = await frontier.lease(5);
        assert.equal(again?.url, first.url);
        assert.equal(again?.attempt, 1);
        assert.notEqual(again?.leaseId, first.leaseId);
        // The old lease is stale now: releasing or acking it again changes nothing.
        await frontier.release([{ taskId: first.taskId, leaseId: first.leaseId }]);
        assert.equal(await ack(frontier, first), 0);
        assert.equal((await frontier.stats()).leased, 2);
      });

      define('stats add up and follow every state change', async ({ frontier, advance }) => {
        await frontier.push(tasks('https://a.test/', 6));
        assert.deepEqual(await frontier.stats(), {
          ready: 6,
          delayed: 0,
          leased: 0,
          done: 0,
          failed: 0,
          total: 6,
          cancelled: 0,
        });
        const [l1, l2, l3, l4] = await frontier.lease(4, { leaseMs: 10_000 });
        assert.ok(l1 && l2 && l3 && l4);
        await frontier.settle({
          acks: [{ lease: l1 }],
          retries: [{ lease: l2, delayMs: 5_000, error: 'timeout' }],
          failures: [{ lease: l3, error: 'http 404' }],
        });
        assert.deepEqual(await frontier.stats(), {
          ready: 2,
          delayed: 1,
          leased: 1,
          done: 1,
          failed: 1,
          total: 6,
          cancelled: 0,
        });
        await assertStatsAddUp(frontier);
        await advance(5_001);
        assert.deepEqual(await frontier.stats(), {
          ready: 3,
          delayed: 0,
          leased: 1,
          done: 1,
          failed: 1,
          total: 6,
          cancelled: 0,
        });
      });
    });

    frontierSettleCases(define);
    frontierResumeCases(define);
    frontierRunCases(define);
  });
}
