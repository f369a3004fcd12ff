import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lease } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { memoryLogger } from '../helpers/log-lines.js';
import { makeRabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { rabbitDiskAlarm } from '../helpers/service-control.js';
import { waitFor } from '../helpers/wait-for.js';
import { ack, leaseAll, task, tasks, urls } from '../contract/frontier-contract-kit.js';

const CONFIRM_TIMEOUT_MS = 1_500;
/** Several confirm timeouts long: the old frontier dropped its link after the first. */
const ALARM_MS = 5 * CONFIRM_TIMEOUT_MS;

/**
 * A resource alarm (RabbitMQ's disk or memory limit) blocks every connection that publishes until
 * it clears. The broker says so (connection.blocked), so a confirm that does not come meanwhile is
 * late, not lost: the frontier keeps its link and its leases, and the settle completes once the
 * alarm clears. Dropping the link instead would hand every delivery back to be fetched again.
 */
it(
  'a settle blocked by a disk alarm longer than the confirm timeout keeps the link and completes',
  { timeout: 60_000 },
  async () => {
    const { logger, lines } = memoryLogger();
    const fx = await makeRabbitFixture(new FakeClock(), { confirmTimeoutMs: CONFIRM_TIMEOUT_MS, logger });
    const f = fx.frontier;
    let alarmed = false;
    try {
      await f.push([task('https://a.test/'), task('https://b.test/')]);
      const [first, second] = await leaseAll(f);
      assert.ok(first && second, 'both seeds leased');

      await rabbitDiskAlarm.raise();
      alarmed = true;
      // Publishing the discovered links blocks the connection.
      let outcome: { applied: number } | { error: unknown } | null = null;
      const settling = ack(f, first, tasks('https://a.test/p', 20)).then(
        (applied) => (outcome = { applied }),
        (error: unknown) => (outcome = { error }),
      );
      await waitFor(() => lines().some((l) => l.msg === 'rabbitmq blocked publishing (resource alarm)'), {
        timeoutMs: 15_000,
        message: 'the broker blocked the connection',
      });
      // Nothing may happen for several confirm timeouts: the publish waits, the link stays.
      assert.equal(f.publishBlocked(), true, 'the frontier says publishing is blocked');
      await sleep(ALARM_MS);
      assert.equal(outcome, null, `the settle waits out the alarm (${JSON.stringify(outcome)})`);
      assert.deepEqual(
        lines().filter((l) => l.msg === 'dropping the broker link'),
        [],
        'the link was not dropped',
      );
      await rabbitDiskAlarm.clear();
      alarmed = false;

      await settling;
      assert.equal(f.publishBlocked(), false, 'no longer blocked');
      assert.deepEqual(outcome, { applied: 1 }, 'the settle completed once the alarm cleared');
      // The lease taken before the alarm is still good: no delivery went back to the broker.
      assert.equal(await ack(f, second), 1, 'a lease from before the alarm settles');
      const children = await leaseAll(f);
      assert.deepEqual(
        urls(children).sort(),
        urls(tasks('https://a.test/p', 20)).sort(),
        'every link published once',
      );
      const stats = await f.stats();
      assert.deepEqual([stats.done, stats.leased, stats.total], [2, 20, 22]);
      assert.ok(
        lines().some((l) => l.msg === 'rabbitmq unblocked publishing'),
        'the unblock was reported',
      );
    } finally {
      if (alarmed) await rabbitDiskAlarm.clear();
      await fx.cleanup();
    }
  },
);

/**
 * A blocked connection is not read at all, so a lease call that has to ask the broker for more
 * (its buffer short) waits until the alarm clears. The leases it took before asking must not run
 * out meanwhile and go back to the queue while it also hands them out: their tasks would be
 * fetched twice (12 of 1,500 pages in a cluster crawl's alarm, test/fault/rabbitmq-alarm).
 */
it(
  'a lease call that waits out an alarm hands out only live leases, each task once',
  { timeout: 60_000 },
  async () => {
    const { logger, lines } = memoryLogger();
    const clock = new FakeClock();
    const fx = await makeRabbitFixture(clock, { confirmTimeoutMs: CONFIRM_TIMEOUT_MS, logger });
    const f = fx.frontier;
    const LEASE_MS = 10_000;
    let alarmed = false;
    try {
      const waiting = tasks('https://b.test/', 3);
      await f.push([task('https://a.test/'), ...waiting]);
      const seed = (await f.lease(1, { leaseMs: LEASE_MS })).at(0);
      assert.ok(seed, 'the seed leased');
      await waitFor(async () => (await f.stats()).ready === 3, {
        timeoutMs: 5_000,
        message: '3 tasks ready',
      });

      await rabbitDiskAlarm.raise();
      alarmed = true;
      const settling = ack(f, seed, tasks('https://c.test/p', 5));
      await waitFor(() => lines().some((l) => l.msg === 'rabbitmq blocked publishing (resource alarm)'), {
        timeoutMs: 15_000,
        message: 'the broker blocked the connection',
      });
      // More than it holds: it takes what it has, then asks the blocked broker for more.
      const leased: { leases: Lease[] | null } = { leases: null };
      const leasing = f.lease(10, { leaseMs: LEASE_MS }).then((got) => (leased.leases = got));
      await sleep(1_000);
      assert.equal(leased.leases, null, 'the lease call waits for the blocked broker');
      // The alarm outlasts the lease time; the frontier's overdue sweep runs meanwhile.
      clock.advance(LEASE_MS + 1);
      const sweeping = f.stats().catch(() => undefined);
      await rabbitDiskAlarm.clear();
      alarmed = false;
      await Promise.all([leasing, settling, sweeping]);

      const first = (leased.leases as Lease[] | null) ?? [];
      for (const lease of first) assert.equal(await ack(f, lease), 1, `${lease.url}: its lease is live`);
      const rest = await leaseAll(f);
      for (const lease of rest) assert.equal(await ack(f, lease), 1, `${lease.url}: its lease is live`);
      const handedOut = urls([...first, ...rest]).sort();
      assert.deepEqual(
        handedOut,
        [...urls(waiting), ...urls(tasks('https://c.test/p', 5))].sort(),
        'each task handed out once',
      );
    } finally {
      if (alarmed) await rabbitDiskAlarm.clear();
      await fx.cleanup();
    }
  },
);
