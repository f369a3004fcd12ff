import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { Dispatcher, type CrawlerSession } from '../../scheduler/dispatch/dispatcher.js';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { makeRabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { ref, tasks } from '../contract/frontier-contract-kit.js';

const RUN = 'default';

function dispatcherOn(frontier: Frontier): Dispatcher {
  return new Dispatcher({
    frontier,
    gate: new HostGate({ ...DEFAULT_POLITENESS, concurrency: 64, delayMs: 0 }),
    logger: silentLogger(),
    clock: Date.now,
    leaseMs: 60_000,
    bufferSize: 50,
    perHostBuffer: 50,
    idleHandBackMs: 200,
  });
}

describe('rabbitmq frontier: a scheduler without crawlers holds no work', () => {
  it('a second scheduler on the same queues with no crawler takes nothing; the first gets every task', async () => {
    const clock = new FakeClock();
    const fx = await makeRabbitFixture(clock, { prefetch: 64 });
    const idle = await fx.open({ ledgerPath: join(dirname(fx.ledgerPath), 'idle-scheduler.db') });
    // The idle scheduler knows the run (as every scheduler does once told of it) and consumes it.
    await idle.resumeRun(RUN);
    const idleDispatcher = dispatcherOn(idle);
    try {
      await fx.frontier.push(tasks('https://a.test/', 200));
      await waitFor(() => !idle.demanded, {
        timeoutMs: 10_000,
        message: 'the scheduler with no crawler to tell its frontier there is no demand',
      });
      // Every task reaches the scheduler that has crawlers (settled as it goes: a lease holds its
      // delivery against the prefetch), none waits in the idle one.
      const done = new Set<string>();
      await waitFor(
        async () => {
          const got = await fx.frontier.lease(100);
          for (const lease of got) done.add(lease.taskId);
          if (got.length > 0) {
            await fx.frontier.settle({
              acks: got.map((l) => ({ lease: ref(l) })),
              retries: [],
              failures: [],
            });
          }
          return done.size === 200;
        },
        { timeoutMs: 20_000, message: () => `all 200 tasks leased by the busy scheduler (${done.size})` },
      );
      assert.equal(idle.heldDeliveries, 0, 'the idle scheduler holds no delivery');
      assert.equal(idleDispatcher.bufferedCount, 0, 'nor does its dispatcher');
      // Only the busy scheduler consumes the run (4 levels); a quorum queue's count lags a little.
      await waitFor(async () => (await fx.queueState!(RUN)).consumers === 4, {
        timeoutMs: 5_000,
        message: async () => `4 consumers of the run, not ${(await fx.queueState!(RUN)).consumers}`,
      });

      // A crawler connecting to the idle scheduler: it consumes again and hands out work.
      await fx.frontier.close();
      await idle.push(tasks('https://b.test/', 20));
      const sent: WireTask[] = [];
      const session: CrawlerSession = { id: 'c1', credit: 20, sendTasks: (t) => sent.push(...t) };
      idleDispatcher.addSession(session);
      await waitFor(
        () => {
          idleDispatcher.pump();
          return sent.length === 20;
        },
        {
          timeoutMs: 20_000,
          message: () => `the connected crawler to get the 20 new tasks (${sent.length})`,
        },
      );
      assert.ok(idle.demanded, 'demand is on again');
      assert.ok(
        sent.every((t) => t.url.startsWith('https://b.test/')),
        'only the new tasks: the first 200 were settled',
      );

      // It leaves: back to holding nothing, and its buffer went back.
      await idleDispatcher.removeSession('c1', { crashed: false });
      await waitFor(() => !idle.demanded && idle.heldDeliveries === 0, {
        timeoutMs: 10_000,
        message: () => `no demand and nothing held after the crawler left (${idle.heldDeliveries} held)`,
      });
      await waitFor(
        async () => {
          const state = await fx.queueState!(RUN);
          return state.consumers === 0 && state.ready === 20;
        },
        {
          timeoutMs: 5_000,
          message: async () =>
            `nobody consuming the run and its 20 tasks ready for another scheduler: ${JSON.stringify(await fx.queueState!(RUN))}`,
        },
      );
    } finally {
      await idleDispatcher.close();
      await fx.cleanup();
    }
  });
});
