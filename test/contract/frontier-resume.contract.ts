import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { type DefineCase, leaseAll, ref, task, tasks, urls } from './frontier-contract-kit.js';

const LEASE_MS = 10_000;

/**
 * Crash-resume: `reopen` opens the store again without closing it first, as a new process would
 * after kill -9. Skipped for adapters whose fixture cannot reopen. Leases of the dead process come
 * back at expiry, or at once for an adapter whose fixture says `crashReleasesLeases`.
 */
export function frontierResumeCases(define: DefineCase): void {
  describe('crash-resume', () => {
    define('keeps every accepted URL, done stays done, leases come back after expiry', async (ctx) => {
      if (ctx.reopen === undefined) return ctx.t.skip('the adapter cannot reopen');
      const before = ctx.frontier;
      await before.push(tasks('https://a.test/', 10));
      const leased = await before.lease(4, { leaseMs: LEASE_MS });
      const [d0, d1] = leased;
      assert.ok(d0 && d1);
      await before.settle({
        acks: [{ lease: ref(d0) }, { lease: ref(d1) }],
        retries: [],
        failures: [],
        checkpoint: 'cp-1',
      });

      const after = await ctx.reopen();
      assert.deepEqual(await after.push(tasks('https://a.test/', 10)), [], 'every URL is still known');
      assert.equal(await after.checkpoint(), 'cp-1');
      let s = await after.stats();
      assert.equal(s.total, 10);
      assert.equal(s.done, 2);

      const beforeExpiry = await leaseAll(after, 100 * LEASE_MS);
      if (ctx.crashReleasesLeases) {
        // A broker put the dead process's deliveries back the moment its connection dropped.
        assert.equal(beforeExpiry.length, 8);
        const now = new Set(urls(beforeExpiry));
        assert.ok(urls(leased.slice(2)).every((url) => now.has(url)));
      } else {
        assert.equal(beforeExpiry.length, 6);
        await ctx.advance(LEASE_MS + 1);
        const returned = await leaseAll(after, LEASE_MS);
        assert.deepEqual(urls(returned).sort(), urls(leased.slice(2)).sort());
      }
      s = await after.stats();
      assert.equal(s.done, 2);
      assert.equal(s.leased, 8);
    });

    define('nothing is lost: every URL is done exactly once after a crash and a drain', async (ctx) => {
      if (ctx.reopen === undefined) return ctx.t.skip('the adapter cannot reopen');
      const doneCount = new Map<string, number>();
      // Every URL offered by a confirmed call; with no maxTotal each is accepted, now or before.
      const offered = new Set<string>();
      const record = (items: readonly NewTask[]): void => items.forEach((t) => offered.add(t.url));
      const ackOne = async (frontier: Frontier, lease: Lease, discovered: NewTask[]): Promise<void> => {
        const result = await frontier.settle({
          acks: [{ lease: ref(lease), discovered }],
          retries: [],
          failures: [],
        });
        assert.equal(result.applied, 1, `ack of ${lease.url} applied`);
        record(discovered);
        doneCount.set(lease.url, (doneCount.get(lease.url) ?? 0) + 1);
      };
      const discoveredFor = (lease: Lease): NewTask[] =>
        lease.depth < 2
          ? [
              task(`${lease.url}/child`, { depth: lease.depth + 1 }),
              ...tasks(`https://b.test/${lease.depth + 1}/`, 3, { depth: lease.depth + 1 }),
            ]
          : [];

      const before = ctx.frontier;
      const seeds = tasks('https://a.test/', 40);
      assert.equal((await before.push(seeds)).length, 40);
      record(seeds);
      const leases = await before.lease(25, { leaseMs: LEASE_MS });
      for (const lease of leases.slice(0, 10)) await ackOne(before, lease, discoveredFor(lease));
      const retry = leases.slice(10, 13);
      await before.settle({
        acks: [],
        retries: retry.map((l) => ({ lease: ref(l), delayMs: 60_000, error: 'timeout' })),
        failures: [],
      });
      // Crash here: 12 leases are outstanding, 3 tasks wait for a retry, the rest are ready.

      const after = await ctx.reopen();
      await ctx.advance(LEASE_MS + 60_000 + 1);
      for (;;) {
        const batch = await after.lease(7, { leaseMs: LEASE_MS });
        if (batch.length === 0) break;
        for (const lease of batch) await ackOne(after, lease, discoveredFor(lease));
      }

      const s = await after.stats();
      assert.equal(s.total, offered.size);
      assert.equal(s.done, offered.size);
      assert.deepEqual([...doneCount.keys()].sort(), [...offered].sort());
      for (const [url, n] of doneCount) assert.equal(n, 1, `${url} done ${n} times`);
    });

    define('lease ids do not repeat for a task across a reopen', async (ctx) => {
      if (ctx.reopen === undefined) return ctx.t.skip('the adapter cannot reopen');
      await ctx.frontier.push([task('https://a.test/1')]);
      const [first] = await ctx.frontier.lease(1, { leaseMs: LEASE_MS });
      assert.ok(first);
      const after = await ctx.reopen();
      await ctx.advance(LEASE_MS + 1);
      const [second] = await after.lease(1, { leaseMs: LEASE_MS });
      assert.ok(second);
      assert.equal(second.taskId, first.taskId);
      assert.notEqual(second.leaseId, first.leaseId);
      assert.equal(
        await after
          .settle({ acks: [{ lease: ref(first) }], retries: [], failures: [] })
          .then((r) => r.applied),
        0,
      );
      assert.equal(
        await after
          .settle({ acks: [{ lease: ref(second) }], retries: [], failures: [] })
          .then((r) => r.applied),
        1,
      );
    });
  });
}
