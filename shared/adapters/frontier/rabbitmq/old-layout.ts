import { StorageError } from '../../../errors.js';
import type { Link } from './broker-link.js';
import { checkQueueOrNull } from './queue-check.js';
import { oldLayoutQueueNames } from './topology.js';

/**
 * Refuses a prefix that still holds the queues of the layout before runs (one classic `tasks`
 * queue with broker priorities, a `dead` queue): its messages have no run, and a crawl half in
 * one layout and half in the other would lose track of its URLs.
 */
export async function checkOldLayout(link: Link, prefix: string): Promise<void> {
  const found: { queue: string; messages: number }[] = [];
  for (const queue of oldLayoutQueueNames(prefix)) {
    const seen = await checkQueueOrNull(link, queue, 'connect');
    if (seen !== null) found.push({ queue, messages: seen.messageCount });
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
