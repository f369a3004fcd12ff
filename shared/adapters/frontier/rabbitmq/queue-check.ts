import type { Channel } from 'amqplib';
import type { Link } from './broker-link.js';
import { unavailable } from './rabbit-errors.js';

export interface QueueCheck {
  messageCount: number;
  consumerCount: number;
}

/**
 * A queue's ready messages and consumers, or null if it does not exist. Checked on a throwaway
 * channel: a passive declare of a missing queue makes the broker close its channel. Any other
 * failure is the broker out of reach (retriable), reported as `op`.
 */
export async function checkQueueOrNull(link: Link, queue: string, op: string): Promise<QueueCheck | null> {
  const channel = await throwawayChannel(link, op);
  try {
    const { messageCount, consumerCount } = await channel.checkQueue(queue);
    return { messageCount, consumerCount };
  } catch (err) {
    if ((err as { code?: unknown }).code === 404) return null;
    throw unavailable(op, err);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

export interface IdleDeletion {
  /** True when every queue was found empty and unconsumed (or missing), and is deleted now. */
  deleted: boolean;
  /** The queues that kept the set: still holding messages, or consumed. */
  busy: { queue: string; messages: number; consumers: number }[];
}

/**
 * Deletes `queues` together, only if each is empty and consumed by no one (quorum queues refuse
 * the broker's own if-empty and if-unused, so each is checked first). The deletes go on a
 * throwaway channel as well: a refusal closes that channel, never the caller's.
 */
export async function deleteQueuesIfIdle(
  link: Link,
  queues: readonly string[],
  op: string,
): Promise<IdleDeletion> {
  const busy: IdleDeletion['busy'] = [];
  for (const queue of queues) {
    const seen = await checkQueueOrNull(link, queue, op);
    if (seen !== null && (seen.messageCount > 0 || seen.consumerCount > 0)) {
      busy.push({ queue, messages: seen.messageCount, consumers: seen.consumerCount });
    }
  }
  if (busy.length > 0) return { deleted: false, busy };
  const channel = await throwawayChannel(link, op);
  try {
    for (const queue of queues) await channel.deleteQueue(queue);
  } catch (err) {
    throw unavailable(op, err);
  } finally {
    await channel.close().catch(() => undefined);
  }
  return { deleted: true, busy };
}

/** A channel of the link's connection whose closing by the broker harms nothing else. */
async function throwawayChannel(link: Link, op: string): Promise<Channel> {
  let channel: Channel;
  try {
    channel = await link.model.createChannel();
  } catch (err) {
    throw unavailable(op, err);
  }
  channel.on('error', () => undefined);
  return channel;
}
