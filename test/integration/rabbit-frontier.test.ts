import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { openRabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { encodeTaskMessage, newTaskMessage } from '../../shared/adapters/frontier/rabbitmq/task-message.js';
import { silentLogger } from '../../shared/logger.js';
import { DEFAULT_RUN_ID, type Lease, type NewTask } from '../../shared/protocol/task.js';
import {
  allExchangeNames,
  allQueueNames,
  routingKey,
} from '../../shared/adapters/frontier/rabbitmq/topology.js';
import Database from 'better-sqlite3';
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

/** Publishes a raw task message to its run's level queue, as a crash would have left it behind. */
async function publishLeftover(fx: RabbitFixture, message: ReturnType<typeof newTaskMessage>): Promise<void> {
  const { queues } = fx.frontier;
  fx.admin.channel.publish(
    queues.readyExchange,
    routingKey(message.runId, message.priority),
    encodeTaskMessage(message),
    {
      persistent: true,
    },
  );
  await fx.admin.channel.checkQueue(queues.orphans);
}

/** Removes what a second frontier on `prefix` declared. */
async function removePrefix(fx: RabbitFixture, prefix: string, runIds: readonly string[]): Promise<void> {
  for (const q of allQueueNames(prefix, [1_000], runIds)) await fx.admin.channel.deleteQueue(q);
  for (const e of allExchangeNames(prefix, [1_000])) await fx.admin.channel.deleteExchange(e);
}

const QUORUM = { durable: true, arguments: { 'x-queue-type': 'quorum' } };

describe('rabbitmq frontier: adapter specifics', () => {
  it('declares quorum queues: per run and level, per-bucket delay queues, orphans and failed, idempotently', () =>
    withFixture(async (fx) => {
      const { queues, retryDelayBucketsMs } = fx.frontier;
      assert.deepEqual(retryDelayBucketsMs, [1_000]);
      await fx.frontier.push([task('https://a.test/1')]);
      const runQueues = [0, 1, 2, 3].map((level) => queues.run(DEFAULT_RUN_ID, level));
      for (const name of [queues.orphans, queues.failed, ...runQueues]) {
        // Declaring it as a quorum queue again is accepted only if it is one (else 406).
        await fx.admin.channel.assertQueue(name, QUORUM);
      }
      assert.equal((await fx.frontier.stats()).ready, 1);
      // The delay queue dead-letters at least once (which needs reject-publish) to the ready exchange.
      await fx.admin.channel.assertQueue(queues.wait(1_000), {
        durable: true,
        arguments: {
          'x-queue-type': 'quorum',
          'x-message-ttl': 1_000,
          'x-dead-letter-exchange': queues.readyExchange,
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      });
      // The same declarations again (a second process, a restart) are accepted.
      const again = await fx.open();
      assert.equal((await again.stats()).total, 1, 'the same ledger');
      await again.close();
    }));

  it('a final failure goes to the failed queue with its last error and run', () =>
    withFixture(async (fx) => {
      await fx.frontier.push([task('https://a.test/gone')]);
      const [lease] = await fx.frontier.lease(1);
      assert.ok(lease);
      await fx.frontier.settle({
        acks: [],
        retries: [],
        failures: [{ lease: ref(lease), error: 'http 404' }],
      });
      const dead = await fx.admin.channel.get(fx.frontier.queues.failed, { noAck: true });
      assert.ok(dead, 'a message in the failed queue');
      assert.equal(dead.properties.headers?.['x-ackcrawl-error'], 'http 404');
      assert.equal(dead.properties.headers?.['x-ackcrawl-run'], DEFAULT_RUN_ID);
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
      // Its run is unknown to this ledger, so no queue of it exists yet: the message goes by the
      // orphans queue, which records the run, declares its queues and routes it there.
      await publishLeftover(fx, newTaskMessage(task('https://a.test/orphan')));
      let lease: Lease | undefined;
      await waitFor(async () => (lease = (await fx.frontier.lease(1))[0]) !== undefined, {
        timeoutMs: 5_000,
        message: 'the orphaned task to be leasable',
      });
      assert.equal(lease?.url, 'https://a.test/orphan');
      assert.ok(lease);
      assert.equal((await fx.frontier.settle(ackAll([lease]))).applied, 1);
      const s = await fx.frontier.stats();
      assert.deepEqual([s.total, s.done, s.ready], [1, 1, 0]);
    }));

  it('refuses a prefix holding the old layout (a classic priority tasks queue), naming what to do', () =>
    withFixture(async (fx) => {
      const prefix = `${fx.prefix}-old`;
      // The queues as the version before runs declared them, with a task left in one.
      await fx.admin.channel.assertQueue(`${prefix}.tasks`, {
        durable: true,
        arguments: { 'x-max-priority': 10 },
      });
      await fx.admin.channel.assertQueue(`${prefix}.dead`, { durable: true });
      const { runId: _runId, ...old } = newTaskMessage(task('https://a.test/old'));
      fx.admin.channel.sendToQueue(`${prefix}.tasks`, Buffer.from(JSON.stringify({ ...old, v: 1 })), {
        persistent: true,
      });
      try {
        await assert.rejects(
          fx.open({ queuePrefix: prefix, ledgerPath: `${fx.ledgerPath}-old` }),
          (err: unknown) => {
            const e = err as { code?: string; retriable?: boolean; message?: string };
            assert.equal(e.code, 'FRONTIER_OLD_LAYOUT');
            assert.equal(e.retriable, false);
            assert.match(e.message ?? '', new RegExp(`${prefix}\\.tasks \\(1 ready\\)`));
            assert.match(e.message ?? '', /delete those queues/);
            return true;
          },
        );
        // Nothing of the new layout was declared over it, and the old task is still there.
        assert.equal((await fx.admin.channel.checkQueue(`${prefix}.tasks`)).messageCount, 1);
      } finally {
        await fx.admin.channel.deleteQueue(`${prefix}.tasks`);
        await fx.admin.channel.deleteQueue(`${prefix}.dead`);
        await removePrefix(fx, prefix, []);
      }
    }));

  it('refuses a ledger of the old layout (version 1) with FRONTIER_OLD_LAYOUT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-rabbit-'));
    try {
      const path = join(dir, 'ledger.db');
      // A version-1 ledger as the version before runs wrote it.
      const db = new Database(path);
      db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        INSERT INTO meta VALUES ('kind', 'ackcrawl-rabbitmq-ledger'), ('ledger_version', '1'), ('total', '1');
        CREATE TABLE urls (url TEXT PRIMARY KEY, state INTEGER NOT NULL, attempt INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO urls VALUES ('https://a.test/', 0, 1);`);
      db.close();
      await assert.rejects(
        openRabbitFrontier({ url: AMQP_URL, ledgerPath: path, prefetch: 10, logger: silentLogger() }),
        (err: unknown) => {
          const e = err as { code?: string; message?: string };
          assert.equal(e.code, 'FRONTIER_OLD_LAYOUT');
          assert.match(e.message ?? '', /layout before runs/);
          return true;
        },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

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
        await removePrefix(fx, `${fx.prefix}-timing`, [DEFAULT_RUN_ID]);
      }
    }));
});
