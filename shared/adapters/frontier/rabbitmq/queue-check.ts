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
  let channel;
  try {
    channel = await link.model.createChannel();
  } catch (err) {
    throw unavailable(op, err);
  }
  channel.on('error', () => undefined);
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
