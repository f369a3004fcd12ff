import type { Channel } from 'amqplib';
import { InvalidInputError } from '../../../errors.js';
import { PRIORITY_LEVELS } from '../../../protocol/task-priority.js';
import { shardOfHost } from './shards.js';

/**
 * Retry delay buckets: a retry waits in the queue of the smallest bucket that is at least its
 * delay. One queue per bucket, each with a queue-wide TTL, so every message in a queue expires in
 * publish order and a short delay never waits behind a long one (per-message TTLs only expire at
 * the head of a queue).
 */
export const DEFAULT_RETRY_DELAY_BUCKETS_MS: readonly number[] = [
  1_000, 5_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000,
];

/**
 * The broker side of the frontier, every queue a quorum queue (replicated, and the only kind that
 * dead-letters at least once):
 * - `<prefix>.run.<runId>.p<level>`: one ready queue per run and priority level, bound to the
 *   `<prefix>.ready` direct exchange by the routing key `<runId>.p<level>`. Pausing a run cancels
 *   its consumers (its messages stay ready, untouched); cancelling deletes its queues.
 *   With hosts split among schedulers (`shards` above 1, see shards.ts) there is one per run,
 *   shard and level instead: `<prefix>.run.<runId>.s<shard>.p<level>`, routing key
 *   `<runId>.s<shard>.p<level>`, and only the shard's owner consumes it. Heartbeats of the
 *   schedulers sharing the prefix go through the fanout exchange `<prefix>.members`, each to an
 *   exclusive queue of its own (see shard-membership.ts).
 * - `<prefix>.wait.<ms>`: a delay queue per bucket (retries, and deliveries set aside), fed
 *   through the fanout exchange of the same name with the message's own routing key. Expired
 *   messages dead-letter, at least once, to `<prefix>.ready` under that key: back to their run's
 *   level queue.
 * - `<prefix>.orphans`: the ready exchange's alternate exchange and queue: a message whose run's
 *   queue is gone (a cancelled run's retry coming back) lands here, never lost in a dead-letter
 *   loop; the frontier drops it if its run was cancelled, else routes it again.
 * - `<prefix>.failed`: final failures, for a person to look at.
 */
export interface QueueNames {
  prefix: string;
  /** Shards the hosts are split into (1: not split, the layout before shards). */
  shards: number;
  readyExchange: string;
  /** The fanout exchange of the schedulers' heartbeats (only used with shards). */
  members: string;
  orphans: string;
  failed: string;
  /** The delay queue (and its fanout exchange) of one bucket. */
  wait: (bucketMs: number) => string;
  /** The ready queue of one run, level and shard (shard 0 when there is one). */
  run: (runId: string, level: number, shard?: number) => string;
  /** How a message finds that queue through the ready exchange. */
  routingKey: (runId: string, level: number, shard?: number) => string;
  /** The shard of a host's tasks. */
  shardOf: (host: string) => number;
}

export function queueNames(prefix: string, shards = 1): QueueNames {
  const split = shards > 1;
  return {
    prefix,
    shards,
    readyExchange: `${prefix}.ready`,
    members: `${prefix}.members`,
    orphans: `${prefix}.orphans`,
    failed: `${prefix}.failed`,
    wait: (bucketMs) => `${prefix}.wait.${bucketMs}`,
    run: (runId, level, shard = 0) =>
      split ? `${prefix}.run.${runId}.s${shard}.p${level}` : `${prefix}.run.${runId}.p${level}`,
    routingKey: (runId, level, shard = 0) => routingKey(runId, level, split ? shard : undefined),
    shardOf: (host) => shardOfHost(host, shards),
  };
}

/** How a message finds its run's level queue (of its shard, when hosts are split) through the ready exchange. */
export function routingKey(runId: string, level: number, shard?: number): string {
  return shard === undefined ? `${runId}.p${level}` : `${runId}.s${shard}.p${level}`;
}

/** The queues of the layout before runs (classic queues, broker priorities), see oldLayoutError. */
export function oldLayoutQueueNames(prefix: string): string[] {
  return [`${prefix}.tasks`, `${prefix}.dead`];
}

/** Every ready queue of a run: of one shard, or of all of them. */
export function runQueueNames(names: QueueNames, runId: string, shard?: number): string[] {
  const shards = shard === undefined ? Array.from({ length: names.shards }, (_, s) => s) : [shard];
  return shards.flatMap((s) =>
    Array.from({ length: PRIORITY_LEVELS }, (_, level) => names.run(runId, level, s)),
  );
}

/** Every queue of a prefix and of the runs named, for tools and tests that remove a crawl. */
export function allQueueNames(
  prefix: string,
  buckets: readonly number[],
  runIds: readonly string[] = [],
  shards = 1,
): string[] {
  const names = queueNames(prefix, shards);
  return [
    names.orphans,
    names.failed,
    ...buckets.map((ms) => names.wait(ms)),
    ...runIds.flatMap((runId) => runQueueNames(names, runId)),
  ];
}

/** Every exchange of a prefix. */
export function allExchangeNames(prefix: string, buckets: readonly number[], shards = 1): string[] {
  const names = queueNames(prefix, shards);
  return [
    names.readyExchange,
    names.orphans,
    ...buckets.map((ms) => names.wait(ms)),
    ...(shards > 1 ? [names.members] : []),
  ];
}

/** Sorted, distinct, positive whole milliseconds; anything else is a configuration mistake. */
export function checkBuckets(buckets: readonly number[]): number[] {
  if (buckets.length === 0) {
    throw new InvalidInputError('FRONTIER_BAD_BUCKETS', 'retryDelayBucketsMs needs at least one bucket');
  }
  for (const ms of buckets) {
    // The TTL is a 32-bit value in RabbitMQ.
    if (!Number.isInteger(ms) || ms <= 0 || ms > 2 ** 31 - 1) {
      throw new InvalidInputError(
        'FRONTIER_BAD_BUCKETS',
        `retry delay buckets must be whole milliseconds in 1..2^31-1, got ${ms}`,
      );
    }
  }
  return [...new Set(buckets)].sort((a, b) => a - b);
}

/**
 * The bucket a delay waits in: the smallest one at least `delayMs`, so a retry is never sooner than
 * asked. A delay beyond the largest bucket waits in the largest one and is sent round again (the
 * message carries its due time), see RabbitFrontier.
 */
export function bucketFor(buckets: readonly number[], delayMs: number): number {
  for (const ms of buckets) if (ms >= delayMs) return ms;
  return buckets[buckets.length - 1] as number;
}

const QUORUM = { 'x-queue-type': 'quorum' } as const;

/**
 * Declares the shared part of the topology, idempotently. A queue that exists with other
 * arguments makes the broker close the channel (406), which the caller reports as a topology
 * error. At-least-once dead-lettering needs `x-overflow: reject-publish` (RabbitMQ 3.10+).
 */
export async function assertTopology(
  channel: Channel,
  names: QueueNames,
  buckets: readonly number[],
): Promise<void> {
  await channel.assertExchange(names.orphans, 'fanout', { durable: true });
  await channel.assertQueue(names.orphans, { durable: true, arguments: QUORUM });
  await channel.bindQueue(names.orphans, names.orphans, '');
  if (names.shards > 1) await channel.assertExchange(names.members, 'fanout', { durable: true });
  await channel.assertExchange(names.readyExchange, 'direct', {
    durable: true,
    alternateExchange: names.orphans,
  });
  await channel.assertQueue(names.failed, { durable: true, arguments: QUORUM });
  for (const ms of buckets) {
    const wait = names.wait(ms);
    await channel.assertExchange(wait, 'fanout', { durable: true });
    await channel.assertQueue(wait, {
      durable: true,
      arguments: {
        ...QUORUM,
        'x-message-ttl': ms,
        'x-dead-letter-exchange': names.readyExchange,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    });
    await channel.bindQueue(wait, wait, '');
  }
}

/** Declares a run's ready queues (of every shard) and binds them, idempotently. */
export async function assertRunQueues(channel: Channel, names: QueueNames, runId: string): Promise<void> {
  for (let shard = 0; shard < names.shards; shard++) {
    for (let level = 0; level < PRIORITY_LEVELS; level++) {
      const queue = names.run(runId, level, shard);
      await channel.assertQueue(queue, { durable: true, arguments: QUORUM });
      await channel.bindQueue(queue, names.readyExchange, names.routingKey(runId, level, shard));
    }
  }
}
