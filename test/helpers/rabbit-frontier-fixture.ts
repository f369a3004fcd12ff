import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelModel } from 'amqplib';
import { defaultConnect } from '../../shared/adapters/frontier/rabbitmq/broker-link.js';
import {
  openRabbitFrontier,
  type RabbitFrontier,
  type RabbitFrontierOptions,
} from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { allExchangeNames, allQueueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { silentLogger } from '../../shared/logger.js';
import { PRIORITY_LEVELS } from '../../shared/protocol/task-priority.js';
import type { FakeClock } from './fake-clock.js';
import { cutConnection, rabbitAdmin, AMQP_URL, type RabbitAdmin } from './rabbitmq.js';
import { waitFor } from './wait-for.js';
import type { FrontierFixture } from '../contract/frontier-contract-kit.js';

/** One short bucket: every retry waits 1 s of real time, and longer delays go round again. */
export const TEST_BUCKETS_MS = [1_000];

export interface RabbitFixture extends FrontierFixture {
  frontier: RabbitFrontier;
  admin: RabbitAdmin;
  prefix: string;
  ledgerPath: string;
  /** Opens another frontier on the same queues and ledger. */
  open: (overrides?: Partial<RabbitFrontierOptions>) => Promise<RabbitFrontier>;
  /** Cuts every open frontier's connection as kill -9 would; they cannot reconnect afterwards. */
  crashAll: () => void;
  /** Cuts one frontier's connection as kill -9 would; it cannot reconnect afterwards. */
  crash: (frontier: RabbitFrontier) => void;
  /** Cuts every open frontier's connection as a network fault would; they reconnect. */
  cutAll: () => void;
}

/**
 * A fresh crawl per test: queues under `test-<uuid>`, a ledger in a temp dir, both removed by
 * cleanup. Fails (never skips) when RabbitMQ is not running.
 */
export async function makeRabbitFixture(
  clock: FakeClock,
  overrides: Partial<RabbitFrontierOptions> = {},
): Promise<RabbitFixture> {
  const admin = await rabbitAdmin();
  const prefix = `test-${randomUUID()}`;
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-rabbit-frontier-'));
  const ledgerPath = join(dir, 'ledger.db');
  const opened: { frontier: RabbitFrontier; cut: (forGood: boolean) => void }[] = [];
  const orphansQueue = `${prefix}.orphans`;

  const open = async (more: Partial<RabbitFrontierOptions> = {}): Promise<RabbitFrontier> => {
    let model: ChannelModel | null = null;
    let crashed = false;
    const frontier = await openRabbitFrontier({
      url: AMQP_URL,
      queuePrefix: prefix,
      ledgerPath,
      prefetch: 64,
      clock: clock.fn,
      logger: silentLogger(),
      retryDelayBucketsMs: TEST_BUCKETS_MS,
      connect: async (url) => {
        if (crashed) throw new Error('this frontier was crashed by the test');
        model = await defaultConnect(url);
        return model;
      },
      ...overrides,
      ...more,
    });
    opened.push({
      frontier,
      cut: (forGood) => {
        crashed ||= forGood;
        if (model !== null) cutConnection(model);
      },
    });
    return frontier;
  };

  const crashAll = (): void => {
    for (const o of opened) o.cut(true);
  };

  return {
    frontier: await open(),
    admin,
    prefix,
    ledgerPath,
    open,
    crashAll,
    crash: (frontier) => {
      for (const o of opened) if (o.frontier === frontier) o.cut(true);
    },
    cutAll: () => {
      for (const o of opened) o.cut(false);
    },
    reopen: async () => {
      crashAll();
      const frontier = await open();
      // The broker has put the dead consumer's deliveries back once only the new consumer is left
      // (every frontier consumes the orphans queue on the connection it consumes its runs on).
      await waitFor(async () => (await admin.channel.checkQueue(orphansQueue)).consumerCount === 1, {
        timeoutMs: 10_000,
        message: 'the broker to drop the crashed consumer',
      });
      return frontier;
    },
    elapse: async (ms) => {
      let waiting = 0;
      for (const bucket of TEST_BUCKETS_MS) {
        waiting += (await admin.channel.checkQueue(`${prefix}.wait.${bucket}`)).messageCount;
      }
      if (waiting === 0) return;
      // Long enough for a TTL to run out and the message to come back, or to go round again.
      await sleep(Math.min(ms, Math.max(...TEST_BUCKETS_MS)) + 600);
    },
    crashReleasesLeases: true,
    queueState: async (runId) => {
      let ready = 0;
      let consumers = 0;
      for (let level = 0; level < PRIORITY_LEVELS; level++) {
        const q = await admin.channel.checkQueue(`${prefix}.run.${runId}.p${level}`);
        ready += q.messageCount;
        consumers += q.consumerCount;
      }
      return { ready, consumers };
    },
    cleanup: async () => {
      try {
        const runIds = new Set<string>();
        for (const o of opened) {
          for (const run of await o.frontier.runs().catch(() => [])) runIds.add(run.runId);
          await o.frontier.close();
        }
        const shards = overrides.shards ?? 1;
        await admin.deleteQueuesAndClose(
          allQueueNames(prefix, TEST_BUCKETS_MS, [...runIds], shards),
          allExchangeNames(prefix, TEST_BUCKETS_MS, shards),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
