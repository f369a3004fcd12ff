import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import { encodeTaskMessage, newTaskMessage } from '../../shared/adapters/frontier/rabbitmq/task-message.js';
import { routingKey, runQueueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import type { RabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { FrontierStats } from '../../shared/ports/frontier.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeRabbitFixture, type RabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { AMQP_URL, checkQueues, type QueueCounts } from '../helpers/rabbitmq.js';
import { waitFor } from '../helpers/wait-for.js';
import { leaseAll, ref, task } from '../contract/frontier-contract-kit.js';

/**
 * A run that is over is retired (RunControl.forgetRun, once SQL holds its end): the RabbitMQ
 * frontier stops consuming, declaring and counting its queues, and deletes them when they are
 * empty and consumed by no one. Nothing still queued is ever deleted.
 */
describe('rabbitmq frontier: retiring a run that is over', () => {
  it('a finished run: its queues go, its counters stay, the other runs are served as before', () =>
    withFixture(async (fx, probe) => {
      const f = fx.frontier;
      await f.push([
        task('https://a.test/1', { runId: 'over' }),
        task('https://b.test/1', { runId: 'live' }),
      ]);
      const over = (await leaseAll(f)).filter((l) => l.runId === 'over');
      await f.settle(acks(over));
      await f.retireRun('over');

      for (const queue of runQueueNames(f.queues, 'over')) {
        assert.equal(await probe.check(queue), null, `${queue} deleted`);
      }
      assert.deepEqual(
        (await f.runs()).map((r) => r.runId),
        ['live'],
        'runs() leaves it out',
      );
      // Its URL rows leave the ledger, in the background; the live run's stay.
      await waitFor(async () => (await f.inspect?.('over', 'https://a.test/1')) === null, {
        timeoutMs: 5_000,
        message: "the finished run's URL rows deleted from the ledger",
      });
      assert.ok(await f.inspect?.('live', 'https://b.test/1'), "the live run's URL kept");
      const stats = await f.stats('over');
      assert.deepEqual([stats.total, stats.done, stats.ready, stats.delayed, stats.leased], [1, 1, 0, 0, 0]);
      // Twice is nothing more; the other run is untouched.
      await f.retireRun('over');
      await f.push([task('https://b.test/2', { runId: 'live' })]);
      const live = await leaseAll(f);
      assert.deepEqual(
        live.map((l) => l.url),
        ['https://b.test/2'],
        "the live run's new task is leased (its first is still leased)",
      );
      for (const queue of runQueueNames(f.queues, 'live')) {
        assert.equal((await probe.check(queue))?.consumerCount, 1, `${queue} still consumed`);
      }

      // A task of it that comes back (found finished too early) goes to the failed queue, once.
      fx.admin.channel.publish(
        f.queues.readyExchange,
        routingKey('over', 0),
        encodeTaskMessage(newTaskMessage(task('https://a.test/late', { runId: 'over' }))),
        { persistent: true },
      );
      const got: GetMessage[] = [];
      await waitFor(
        async () => {
          const message = await fx.admin.channel.get(f.queues.failed, { noAck: true });
          if (message !== false) got.push(message);
          return got.length > 0;
        },
        { timeoutMs: 10_000, message: 'the late task in the failed queue' },
      );
      const [dead] = got;
      assert.ok(dead);
      assert.match(String(dead.properties.headers?.['x-ackcrawl-error']), /run was over/);
      assert.equal((await probe.check(f.queues.orphans))?.messageCount, 0, 'not round the orphans queue');
      assert.equal(
        await probe.check(runQueueNames(f.queues, 'over')[0] as string),
        null,
        'not declared again',
      );
    }));

  it('a cancelled run: retired, its URL rows go once its lease still out is settled', () =>
    withFixture(async (fx, probe) => {
      const f = fx.frontier;
      await f.push([
        task('https://a.test/1', { runId: 'gone' }),
        task('https://a.test/2', { runId: 'gone' }),
        task('https://b.test/1', { runId: 'live' }),
      ]);
      const gone = (await leaseAll(f)).filter((l) => l.runId === 'gone').sort(byUrl);
      const [first, second] = gone;
      assert.ok(first && second);
      await f.settle(acks([first]));
      assert.equal(await f.cancelRun('gone'), 0, 'nothing queued: its other task is leased');
      await f.retireRun('gone');

      assert.deepEqual(
        (await f.runs()).map((r) => r.runId),
        ['live'],
        'runs() leaves it out',
      );
      for (const queue of runQueueNames(f.queues, 'gone')) {
        assert.equal(await probe.check(queue), null, `${queue} deleted`);
      }
      assert.deepEqual(pick(await f.stats('gone')), [2, 1, 0, 1, 0], 'its lease still out is counted');
      assert.ok(await f.inspect?.('gone', 'https://a.test/2'), 'rows kept while a lease is out');

      // The lease's outcome is settled against its row, then the rows go.
      await f.settle(acks([second]));
      assert.deepEqual(pick(await f.stats('gone')), [2, 2, 0, 0, 0], 'the late outcome counted');
      await waitFor(
        async () =>
          (await f.inspect?.('gone', 'https://a.test/1')) === null &&
          (await f.inspect?.('gone', 'https://a.test/2')) === null,
        { timeoutMs: 5_000, message: "the cancelled run's URL rows deleted from the ledger" },
      );
      assert.ok(await f.inspect?.('live', 'https://b.test/1'), "the live run's URL kept");
      await f.retireRun('gone');
      assert.deepEqual(pick(await f.stats('gone')), [2, 2, 0, 0, 0], 'retiring twice changes nothing');
    }));

  it('a cancelled run with queued work: its pending tasks count as cancelled, its rows go at the next start', () =>
    withFixture(async (fx) => {
      await fx.frontier.push([
        task('https://a.test/1', { runId: 'stopped' }),
        task('https://a.test/2', { runId: 'stopped' }),
        task('https://a.test/3', { runId: 'stopped' }),
      ]);
      const leased = await leaseAll(fx.frontier);
      assert.equal(leased.length, 3);
      const [out] = leased;
      assert.ok(out);
      // Two go back to the broker (their crawler died); one stays out.
      await fx.frontier.release(leased.slice(1).map(ref));
      assert.equal(await fx.frontier.cancelRun('stopped'), 2);
      await fx.frontier.retireRun('stopped');
      assert.deepEqual(pick(await fx.frontier.stats('stopped')), [3, 0, 0, 1, 2]);

      // A restart hands the lease back (dropped: its run is cancelled) and sweeps the rows.
      await fx.frontier.close();
      const again = await fx.open();
      assert.deepEqual(await again.runs(), [], 'still retired after a restart');
      await waitFor(async () => (await again.inspect?.('stopped', 'https://a.test/1')) === null, {
        timeoutMs: 5_000,
        message: 'its URL rows deleted after the restart',
      });
      assert.deepEqual(pick(await again.stats('stopped')), [3, 0, 0, 0, 3], 'every pending task cancelled');
    }));

  it('queues still holding work are kept (and not consumed), across a restart of the frontier', () =>
    withFixture(async (fx, probe) => {
      await fx.frontier.push([
        task('https://a.test/1', { runId: 'early' }),
        task('https://a.test/2', { runId: 'early' }),
      ]);
      await waitFor(async () => (await fx.frontier.stats('early')).ready === 2, {
        timeoutMs: 5_000,
        message: 'both tasks ready',
      });
      // Its buffered deliveries go back to the broker: 2 messages stay in its queues.
      await fx.frontier.retireRun('early');
      assert.equal(await readyIn(probe, fx.frontier, 'early'), 2);
      assert.deepEqual(await fx.frontier.lease(10), [], 'nothing of it is leased');

      await fx.frontier.close();
      const again = await fx.open();
      assert.deepEqual(await again.runs(), [], 'still retired after a restart');
      assert.equal(await readyIn(probe, again, 'early'), 2, 'its work is never deleted');
      for (const queue of runQueueNames(again.queues, 'early')) {
        assert.equal((await probe.check(queue))?.consumerCount, 0, `${queue} not consumed`);
      }
      assert.deepEqual(await again.lease(10), []);
      probe.leftover.push(...runQueueNames(again.queues, 'early'));
    }));

  it('a queue another consumer still reads is kept; the next connect deletes it once no one does', () =>
    withFixture(async (fx, probe) => {
      const f = fx.frontier;
      await f.push([task('https://a.test/1', { runId: 'shared' })]);
      await f.settle(acks(await leaseAll(f)));
      // Another scheduler still consuming one of its queues (it has not retired the run yet).
      const first = runQueueNames(f.queues, 'shared')[0] as string;
      const peer = await probe.model.createChannel();
      const { consumerTag } = await peer.consume(first, () => undefined);
      await f.retireRun('shared');
      for (const queue of runQueueNames(f.queues, 'shared')) {
        assert.notEqual(await probe.check(queue), null, `${queue} kept while another consumes`);
      }
      assert.equal((await probe.check(first))?.consumerCount, 1, 'only the other consumer is left');

      await peer.cancel(consumerTag);
      await peer.close();
      await f.close();
      const again = await fx.open();
      for (const queue of runQueueNames(again.queues, 'shared')) {
        assert.equal(await probe.check(queue), null, `${queue} deleted at the next connect`);
      }
      assert.equal((await again.stats('shared')).done, 1);
    }));
});

interface Probe {
  /** A connection of the test's own, for a consumer that plays another scheduler. */
  model: ChannelModel;
  /** A queue's counts, or null when it does not exist. */
  check: (queue: string) => Promise<QueueCounts | null>;
  /** Queues a test leaves behind on purpose, deleted at cleanup. */
  leftover: string[];
}

async function withFixture(body: (fx: RabbitFixture, probe: Probe) => Promise<void>): Promise<void> {
  const fx = await makeRabbitFixture(new FakeClock());
  const model = await connect(AMQP_URL);
  model.on('error', () => undefined);
  const probe: Probe = {
    model,
    leftover: [],
    check: async (queue) => (await checkQueues([queue])).get(queue) ?? null,
  };
  try {
    await body(fx, probe);
  } finally {
    const channel = await model.createChannel();
    for (const queue of probe.leftover) await channel.deleteQueue(queue);
    await model.close();
    await fx.cleanup();
  }
}

async function readyIn(probe: Probe, frontier: RabbitFrontier, runId: string): Promise<number> {
  let ready = 0;
  for (const queue of runQueueNames(frontier.queues, runId))
    ready += (await probe.check(queue))?.messageCount ?? 0;
  return ready;
}

/** total, done, failed, leased, cancelled */
function pick(stats: FrontierStats): number[] {
  return [stats.total, stats.done, stats.failed, stats.leased, stats.cancelled];
}

const byUrl = (a: Lease, b: Lease): number => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);

function acks(leases: readonly Lease[]) {
  return { acks: leases.map((l) => ({ lease: ref(l) })), retries: [], failures: [] };
}
