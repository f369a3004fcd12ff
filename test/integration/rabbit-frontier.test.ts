import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { openRabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { encodeTaskMessage, newTaskMessage } from '../../shared/adapters/frontier/rabbitmq/task-message.js';
import { silentLogger } from '../../shared/logger.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeRabbitFixture, type RabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { AMQP_URL } from '../helpers/rabbitmq.js';
import { waitFor } from '../helpers/wait-for.js';
import { leaseAll, ref, task, tasks } from '../contract/frontier-contract-kit.js';

async function withFixture(body: (fx: RabbitFixture, clock: FakeClock) => Promise<void>): Promise<void> {
  const clock = new FakeClock();
  const fx = await makeRabbitFixture(clock);
  try {
    await body(fx, clock);
  } finally {
    await fx.cleanup();
  }
}

const ackAll = (leases: readonly Lease[], discovered: (l: Lease) => NewTask[] = () => []) => ({
  acks: leases.map((l) => ({ lease: ref(l), discovered: discovered(l) })),
  retries: [],
  failures: [],
});

/** Publishes a raw task message, as a crash would have left it behind. */
async function publishLeftover(fx: RabbitFixture, message: ReturnType<typeof newTaskMessage>): Promise<void> {
  fx.admin.channel.sendToQueue(fx.frontier.queues.tasks, encodeTaskMessage(message), { persistent: true });
  await fx.admin.channel.checkQueue(fx.frontier.queues.tasks);
}

describe('rabbitmq frontier: adapter specifics', () => {
  it('declares a priority tasks queue, per-bucket delay queues and a dead queue, idempotently', () =>
    withFixture(async (fx) => {
      const { queues, retryDelayBucketsMs } = fx.frontier;
      assert.deepEqual(retryDelayBucketsMs, [1_000]);
      for (const name of [queues.tasks, queues.dead, queues.delay(1_000)]) {
        assert.equal((await fx.admin.channel.checkQueue(name)).messageCount, 0, name);
      }
      // The same declarations again (a second process, a restart) are accepted.
      const again = await fx.open();
      assert.equal((await again.stats()).total, 0);
      await again.close();
    }));

  it('a final failure goes to the dead queue with its last error', () =>
    withFixture(async (fx) => {
      await fx.frontier.push([task('https://a.test/gone')]);
      const [lease] = await fx.frontier.lease(1);
      assert.ok(lease);
      await fx.frontier.settle({
        acks: [],
        retries: [],
        failures: [{ lease: ref(lease), error: 'http 404' }],
      });
      const dead = await fx.admin.channel.get(fx.frontier.queues.dead, { noAck: true });
      assert.ok(dead, 'a message in the dead queue');
      assert.equal(dead.properties.headers?.['x-ackcrawl-error'], 'http 404');
      assert.equal(dead.properties.deliveryMode, 2);
      const body = JSON.parse(dead.content.toString()) as { url: string; lastError: string; attempt: number };
      assert.deepEqual([body.url, body.lastError, body.attempt], ['https://a.test/gone', 'http 404', 1]);
    }));

  it('drops leftover duplicates of finished URLs and of older attempts at delivery', () =>
    withFixture(async (fx) => {
      const f = fx.frontier;
      await f.push([task('https://a.test/done'), task('https://a.test/retried')]);
      const leases = await f.lease(2);
      const done = leases.find((l) => l.url.endsWith('/done'));
      const retried = leases.find((l) => l.url.endsWith('/retried'));
      assert.ok(done && retried);
      await f.settle({
        acks: [{ lease: ref(done) }],
        retries: [{ lease: ref(retried), delayMs: 0, error: 'reset' }],
        failures: [],
      });
      await publishLeftover(fx, newTaskMessage(task('https://a.test/done')));
      await publishLeftover(fx, newTaskMessage(task('https://a.test/retried')));
      const again = await leaseAll(f);
      assert.deepEqual(
        again.map((l) => [l.url, l.attempt]),
        [['https://a.test/retried', 2]],
      );
      assert.equal(f.duplicatesDropped, 2);
      const s = await f.stats();
      assert.deepEqual([s.total, s.done, s.leased, s.ready], [2, 1, 1, 0]);
    }));

  it('a message pushed by a process that crashed before its ledger write is still crawled', () =>
    withFixture(async (fx) => {
      await publishLeftover(fx, newTaskMessage(task('https://a.test/orphan')));
      const [lease] = await leaseAll(fx.frontier);
      assert.equal(lease?.url, 'https://a.test/orphan');
      assert.ok(lease);
      assert.equal((await fx.frontier.settle(ackAll([lease]))).applied, 1);
      const s = await fx.frontier.stats();
      assert.deepEqual([s.total, s.done, s.ready], [1, 1, 0]);
    }));

  it('serves by the replaceable priority rule', () =>
    withFixture(async (fx) => {
      const vip = await fx.open({
        queuePrefix: `${fx.prefix}-vip`,
        ledgerPath: `${fx.ledgerPath}-vip`,
        priority: (t) => (t.url.includes('/vip') ? 9 : 0),
      });
      try {
        await vip.push([task('https://a.test/1'), task('https://a.test/vip'), task('https://a.test/2')]);
        const got = await vip.lease(3);
        assert.deepEqual(
          got.map((l) => l.url),
          ['https://a.test/vip', 'https://a.test/1', 'https://a.test/2'],
        );
      } finally {
        await vip.close();
        for (const q of [vip.queues.tasks, vip.queues.dead, vip.queues.delay(1_000)]) {
          await fx.admin.channel.deleteQueue(q);
        }
      }
    }));

  it('keeps leases inside the consumer ack timeout', () =>
    withFixture(async (fx) => {
      await assert.rejects(fx.frontier.lease(1, { leaseMs: 26 * 60_000 }), {
        name: 'InvalidInputError',
        code: 'FRONTIER_BAD_LEASE_MS',
      });
      await assert.rejects(fx.frontier.renew([], 31 * 60_000), { code: 'FRONTIER_BAD_LEASE_MS' });
      await assert.rejects(fx.open({ leaseMs: 40 * 60_000 }), { code: 'FRONTIER_BAD_LEASE_MS' });
    }));

  it('fails fast with a retriable FRONTIER_UNAVAILABLE when the broker cannot be reached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-rabbit-'));
    try {
      await assert.rejects(
        openRabbitFrontier({
          url: 'amqp://guest:guest@127.0.0.1:1',
          ledgerPath: join(dir, 'ledger.db'),
          prefetch: 10,
          logger: silentLogger(),
        }),
        { name: 'StorageError', code: 'FRONTIER_UNAVAILABLE', retriable: true },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a ledger path that holds a SQLite frontier', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-rabbit-'));
    try {
      const path = join(dir, 'frontier.db');
      await openSqliteFrontier({ path }).close();
      await assert.rejects(
        openRabbitFrontier({ url: AMQP_URL, ledgerPath: path, prefetch: 10, logger: silentLogger() }),
        { code: 'FRONTIER_SCHEMA', retriable: false },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('after a lost connection: calls fail as retriable, leases go stale, messages come back', () =>
    withFixture(async (fx) => {
      const f = fx.frontier;
      await f.push(tasks('https://a.test/', 3));
      const before = await f.lease(3);
      assert.equal(before.length, 3);
      fx.cutAll();
      await waitFor(() => !f.connected, { message: 'the frontier to notice the cut' });
      await assert.rejects(f.push([task('https://a.test/new')]), {
        code: 'FRONTIER_UNAVAILABLE',
        retriable: true,
      });
      await assert.rejects(f.settle(ackAll(before)), { code: 'FRONTIER_UNAVAILABLE', retriable: true });
      await f.release(before.map(ref)); // stale: nothing to do, and no throw
      await waitFor(() => f.connected, { timeoutMs: 10_000, message: 'the frontier to reconnect' });
      assert.deepEqual(await f.settle(ackAll(before)), { applied: 0, accepted: 0 });
      const after = await leaseAll(f);
      assert.deepEqual(after.map((l) => l.url).sort(), before.map((l) => l.url).sort());
      assert.ok(after.every((l) => l.attempt === 1));
      assert.equal((await f.settle(ackAll(after))).applied, 3);
      const s = await f.stats();
      assert.deepEqual([s.total, s.done, s.ready, s.leased], [3, 3, 0, 0]);
    }));

  it('a settle cut off mid-publish fails as retriable; retried, it is stale and nothing is lost', () =>
    withFixture(async (fx) => {
      const f = fx.frontier;
      await f.push([task('https://a.test/root')]);
      const [root] = await f.lease(1);
      assert.ok(root);
      const children = (): NewTask[] => tasks('https://b.test/', 2_000, { depth: 1 });
      const settling = f.settle(ackAll([root], children));
      setImmediate(() => fx.cutAll());
      await assert.rejects(settling, { code: 'FRONTIER_UNAVAILABLE', retriable: true });
      await waitFor(() => f.connected, { timeoutMs: 10_000, message: 'the frontier to reconnect' });
      assert.deepEqual(await f.settle(ackAll([root], children)), { applied: 0, accepted: 0 });
      // The root comes back; its children, some of them already published once, are pushed again.
      const done = new Map<string, number>();
      for (;;) {
        const batch = await f.lease(64);
        if (batch.length === 0) break;
        await f.settle(ackAll(batch, (l) => (l.depth === 0 ? children() : [])));
        for (const l of batch) done.set(l.url, (done.get(l.url) ?? 0) + 1);
      }
      assert.equal(done.size, 2_001, 'every URL crawled');
      const s = await f.stats();
      assert.deepEqual([s.total, s.done, s.ready, s.delayed, s.leased], [2_001, 2_001, 0, 0, 0]);
    }));

  it('close is idempotent, hands back what it held, and later calls reject', () =>
    withFixture(async (fx) => {
      await fx.frontier.push(tasks('https://a.test/', 4));
      assert.equal((await fx.frontier.lease(2)).length, 2);
      await Promise.all([fx.frontier.close(), fx.frontier.close()]);
      await fx.frontier.close();
      await assert.rejects(fx.frontier.push([task('https://a.test/x')]), { code: 'FRONTIER_CLOSED' });
      await assert.rejects(fx.frontier.stats(), { code: 'FRONTIER_CLOSED' });
      const next = await fx.open();
      assert.equal((await leaseAll(next)).length, 4);
    }));

  it('timings: push, lease and settle with confirms (printed)', (t) =>
    withFixture(async (fx) => {
      const fast = await fx.open({
        queuePrefix: `${fx.prefix}-timing`,
        ledgerPath: `${fx.ledgerPath}-timing`,
        prefetch: 1_000,
      });
      const rounds = 5;
      const sum = { push: 0, lease: 0, settle: 0, stats: 0 };
      const time = async <T>(key: keyof typeof sum, fn: () => Promise<T>): Promise<T> => {
        const start = performance.now();
        const result = await fn();
        sum[key] += performance.now() - start;
        return result;
      };
      try {
        for (let r = 0; r < rounds; r++) {
          await time('push', () => fast.push(tasks(`https://h${r}.test/`, 100)));
          const leases = await time('lease', () => fast.lease(100));
          assert.equal(leases.length, 100);
          const result = await time('settle', () =>
            fast.settle(ackAll(leases, (l) => tasks(`${l.url}/`, 20, { depth: 1 }))),
          );
          assert.deepEqual(result, { applied: 100, accepted: 2_000 });
          await time('stats', () => fast.stats());
        }
        const ms = (key: keyof typeof sum): string => (sum[key] / rounds).toFixed(1);
        t.diagnostic(
          `push 100: ${ms('push')} ms; lease 100: ${ms('lease')} ms; ` +
            `settle 100 acks x 20 discovered (2,000 confirmed publishes): ${ms('settle')} ms; ` +
            `stats (uncached): ${ms('stats')} ms`,
        );
      } finally {
        await fast.close();
        for (const q of [fast.queues.tasks, fast.queues.dead, fast.queues.delay(1_000)]) {
          await fx.admin.channel.deleteQueue(q);
        }
      }
    }));
});
