import type { Channel } from 'amqplib';
import { InvalidInputError } from '../../../errors.js';

/**
 * Retry delay buckets: a retry waits in the queue of the smallest bucket that is at least its
 * delay. One queue per bucket, each with a queue-wide TTL, so every message in a queue expires in
 * publish order and a short delay never waits behind a long one (per-message TTLs only expire at
 * the head of a queue).
 */
export const DEFAULT_RETRY_DELAY_BUCKETS_MS: readonly number[] = [
  1_000, 5_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000,
];

/** Broker priorities are 0..9; the queue is declared with x-max-priority 10. */
export const MAX_PRIORITY = 10;

export interface QueueNames {
  /** Ready tasks, by priority. */
  tasks: string;
  /** Final failures, with their last error in the headers. */
  dead: string;
  /** The delay queue of one bucket. */
  delay: (bucketMs: number) => string;
}

export function queueNames(prefix: string): QueueNames {
  return {
    tasks: `${prefix}.tasks`,
    dead: `${prefix}.dead`,
    delay: (bucketMs) => `${prefix}.delay.${bucketMs}`,
  };
}

/** Every queue of a prefix, for tools and tests that remove a crawl. */
export function allQueueNames(prefix: string, buckets: readonly number[]): string[] {
  const names = queueNames(prefix);
  return [names.tasks, names.dead, ...buckets.map((ms) => names.delay(ms))];
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

/**
 * Declares the queues, idempotently. Every message goes through the default exchange, routed by
 * queue name; a delay queue dead-letters expired messages back to the tasks queue the same way.
 * A queue that exists with other arguments makes the broker close the channel (406), which the
 * caller reports as a topology error.
 */
export async function assertTopology(
  channel: Channel,
  names: QueueNames,
  buckets: readonly number[],
): Promise<void> {
  await channel.assertQueue(names.tasks, { durable: true, arguments: { 'x-max-priority': MAX_PRIORITY } });
  await channel.assertQueue(names.dead, { durable: true });
  for (const ms of buckets) {
    await channel.assertQueue(names.delay(ms), {
      durable: true,
      arguments: {
        'x-message-ttl': ms,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': names.tasks,
      },
    });
  }
}
