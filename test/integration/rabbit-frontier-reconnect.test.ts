import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AppError } from '../../shared/errors.js';
import { openRabbitFrontier } from '../../shared/adapters/frontier/rabbitmq/rabbit-frontier.js';
import { allExchangeNames, allQueueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { DEFAULT_RUN_ID } from '../../shared/protocol/task.js';
import type { Settlement } from '../../shared/ports/frontier.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { memoryLogger } from '../helpers/log-lines.js';
import { AMQP_URL, rabbitAdmin } from '../helpers/rabbitmq.js';
import { ref, tasks } from '../contract/frontier-contract-kit.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);
const services = (...args: string[]) =>
  run('bash', ['scripts/services.sh', ...args], { cwd: ROOT, timeout: 240_000 });

const SEEDS = 300;
const CHILDREN = 5;
const BUCKETS = [1_000];

/** Every 7th URL fails once (retried at once), every 11th once more after a delay. */
const retryDelayFor = (lease: Lease): number | null => {
  const n = Number(/(\d+)$/.exec(lease.url)?.[1] ?? 0);
  if (lease.attempt === 1 && n % 7 === 0) return 0;
  if (lease.attempt <= 2 && n % 11 === 0) return 500;
  return null;
};

const childrenOf = (lease: Pick<NewTask, 'url' | 'depth'>): NewTask[] =>
  lease.depth === 0 ? tasks(`${lease.url}/c`, CHILDREN, { depth: 1, parentUrl: lease.url }) : [];

it(
  'rabbitmq frontier survives a broker restart mid-crawl: nothing lost, duplicates counted',
  { timeout: 300_000 },
  async (t) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): void => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);

    // Fails, with how to start it, when RabbitMQ is not running.
    await (await rabbitAdmin()).deleteQueuesAndClose([]);
    const prefix = `test-${randomUUID()}`;
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-rabbit-reconnect-'));
    const { logger, lines } = memoryLogger();
    const frontier = await openRabbitFrontier({
      url: AMQP_URL,
      queuePrefix: prefix,
      ledgerPath: join(dir, 'ledger.db'),
      prefetch: 100,
      leaseMs: 60_000,
      logger,
      retryDelayBucketsMs: BUCKETS,
    });
    let restart: Promise<void> | null = null;
    /** Why RabbitMQ could not be started again at the end, if it could not. */
    let brokerUp: unknown = null;
    try {
      const expected = new Set<string>();
      const acked = new Map<string, number>();
      let retriable = 0;
      let staleBatches = 0;
      let staleLeases = 0;
      const seeds = tasks('https://site.test/p', SEEDS);
      for (const seed of seeds) {
        expected.add(seed.url);
        for (const child of childrenOf(seed)) {
          expected.add(child.url);
        }
      }
      await frontier.push(seeds);

      /** As the scheduler's settler does: keep the batch and try the whole settle again. */
      const settleUntilDone = async (batch: Settlement): Promise<number> => {
        for (;;) {
          try {
            return (await frontier.settle(batch)).applied;
          } catch (err) {
            if (!(err instanceof AppError && err.retriable)) throw err;
            retriable += 1;
            await sleep(200);
          }
        }
      };

      const deadline = Date.now() + 240_000;
      for (;;) {
        assert.ok(Date.now() < deadline, `crawl did not finish; ${acked.size}/${expected.size} acked`);
        if (restart === null && acked.size >= expected.size / 3) {
          // Not awaited: the crawl goes on into the outage and through it.
          restart = services('down', 'rabbitmq').then(async () => {
            await services('up', 'rabbitmq');
          });
        }
        let leases: Lease[];
        try {
          leases = await frontier.lease(50);
        } catch (err) {
          if (!(err instanceof AppError && err.retriable)) throw err;
          retriable += 1;
          await sleep(100);
          continue;
        }
        if (leases.length === 0) {
          let s;
          try {
            s = await frontier.stats();
          } catch (err) {
            if (!(err instanceof AppError && err.retriable)) throw err;
            retriable += 1;
            await sleep(100);
            continue;
          }
          if (s.ready + s.delayed + s.leased === 0 && restart !== null) break;
          await sleep(50);
          continue;
        }
        // A crawler's worth of work: slow enough that the restart lands mid-crawl.
        await sleep(20);
        const acks = leases.filter((lease) => retryDelayFor(lease) === null);
        const applied = await settleUntilDone({
          acks: acks.map((lease) => ({ lease: ref(lease), discovered: childrenOf(lease) })),
          retries: leases.flatMap((lease) => {
            const delayMs = retryDelayFor(lease);
            return delayMs === null ? [] : [{ lease: ref(lease), delayMs, error: 'http 503' }];
          }),
          failures: [],
        });
        // Leases of one batch come from one channel: all stale (the link died) or none.
        assert.ok(applied === 0 || applied === leases.length, `applied ${applied} of ${leases.length}`);
        if (applied === 0) {
          // Their messages come back and are crawled again: the work a crawler did twice.
          staleBatches += 1;
          staleLeases += leases.length;
        } else for (const lease of acks) acked.set(lease.url, (acked.get(lease.url) ?? 0) + 1);
      }
      await restart;

      const missing = [...expected].filter((url) => !acked.has(url));
      const extra = [...acked.keys()].filter((url) => !expected.has(url));
      const duplicates = [...acked.values()].reduce((sum, n) => sum + n - 1, 0);
      const s = await frontier.stats();
      t.diagnostic(
        `urls ${expected.size}; acked ${acked.size}; duplicate acks ${duplicates}; ` +
          `copies dropped at delivery ${frontier.duplicatesDropped}; ` +
          `stale batches ${staleBatches} (${staleLeases} leases redone); ` +
          `retriable errors ${retriable}`,
      );
      assert.deepEqual(missing, [], 'every URL is settled');
      assert.deepEqual(extra, []);
      assert.deepEqual([s.total, s.done, s.failed], [expected.size, expected.size, 0]);
      assert.ok(retriable > 0 || staleBatches > 0, 'the restart was noticed');
      assert.ok(
        lines().some((line) => line.msg === 'reconnected to rabbitmq'),
        'the frontier reconnected by itself',
      );
      assert.ok(duplicates <= expected.size * 0.05, `duplicates ${duplicates} stay rare`);
      assert.deepEqual(unhandled, [], 'no unhandled errors');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUnhandled);
      // Whatever happened, RabbitMQ is left running for everyone else.
      await Promise.resolve(restart).catch(() => undefined);
      // Each step whatever the one before did: a frontier left open keeps reconnecting, and this
      // file's process would never end.
      brokerUp = await services('up', 'rabbitmq').then(
        () => null,
        (err: unknown) => err,
      );
      await frontier.close();
      rmSync(dir, { recursive: true, force: true });
      if (brokerUp === null) {
        const admin = await rabbitAdmin();
        await admin.deleteQueuesAndClose(
          allQueueNames(prefix, BUCKETS, [DEFAULT_RUN_ID]),
          allExchangeNames(prefix, BUCKETS),
        );
      }
    }
    // Reached only when the test itself passed: then a broker that did not come back fails it.
    if (brokerUp !== null) throw brokerUp;
  },
);
