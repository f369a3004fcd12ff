import { StorageError } from '../../../errors.js';
import type { Link } from './broker-link.js';
import { unavailable } from './rabbit-errors.js';
import { oldLayoutQueueNames } from './topology.js';

/**
 * Refuses a prefix that still holds the queues of the layout before runs (one classic `tasks`
 * queue with broker priorities, a `dead` queue): its messages have no run, and a crawl half in
 * one layout and half in the other would lose track of its URLs. Each queue is looked up on a
 * throwaway channel, since a passive declare of a missing queue closes its channel.
 */
export async function checkOldLayout(link: Link, prefix: string): Promise<void> {
  const found: { queue: string; messages: number }[] = [];
  for (const queue of oldLayoutQueueNames(prefix)) {
    let channel;
    try {
      channel = await link.model.createChannel();
    } catch (err) {
      throw unavailable('connect', err);
    }
    channel.on('error', () => undefined);
    try {
      const { messageCount } = await channel.checkQueue(queue);
      found.push({ queue, messages: messageCount });
    } catch {
      // Not there: the expected case.
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
  if (found.length === 0) return;
  const list = found.map((f) => `${f.queue} (${f.messages} ready)`).join(', ');
  throw new StorageError(
    'FRONTIER_OLD_LAYOUT',
    `queue prefix ${prefix} holds a frontier of the layout before runs and quorum queues: ${list}. ` +
      `Finish that crawl with the ackcrawl version that wrote it, or delete those queues, its ` +
      `${prefix}.delay.* queues and its ledger file to start over (rabbitmqctl delete_queue <name>), ` +
      `or give this crawl another queue prefix`,
    { details: { prefix, queues: found.map((f) => f.queue) } },
  );
}
