import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
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
