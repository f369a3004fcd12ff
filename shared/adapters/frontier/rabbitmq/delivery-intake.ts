import type { ConsumeMessage } from 'amqplib';
import type { Logger } from '../../../logger.js';
import { ackOn, requeueOn, type Link } from './broker-link.js';
import { LedgerState, type Ledger, type LedgerEntry } from './ledger.js';
import type { LeaseBook } from './lease-book.js';
import type { Publisher } from './publisher.js';
import { clampPriority, decodeTaskMessage, taskIdFor, type TaskMessage } from './task-message.js';
import { bucketFor, type QueueNames } from './topology.js';

export interface DeliveryIntakeDeps {
  ledger: Ledger;
  book: LeaseBook;
  publisher: Publisher;
  names: QueueNames;
  buckets: readonly number[];
  clock: () => number;
  logger: Logger;
  /** Broker priority for a message that arrived without one. */
  priorityOf: (task: TaskMessage) => number;
  /** This process changed what the queues hold. */
  onQueuesChanged: () => void;
}

/**
 * Where every delivery lands first. Most go to the lease book. Three kinds do not:
 * - leftovers of a crash (the ledger already has the URL's outcome, or a newer attempt was
 *   published, or this process already holds a copy): acked and counted as duplicates, never
 *   fetched again. Dropping a second copy is safe: the first is unacked here, so if this process
 *   or its link dies the broker still has it;
 * - a retry back from its delay queue before its due time (the delay was longer than the largest
 *   bucket): sent round the delay queues again;
 * - a body that is not a task message: moved to the dead queue as it is.
 */
export class DeliveryIntake {
  /** Leftover messages dropped because the ledger knew better. */
  duplicates = 0;
  /** Messages being moved to a delay queue (counted as delayed) or to the dead queue. */
  moving = 0;

  constructor(private readonly deps: DeliveryIntakeDeps) {}

  accept(link: Link, message: ConsumeMessage): void {
    if (!link.alive) return;
    const { deps } = this;
    const task = decodeTaskMessage(message.content);
    if (task === null) {
      void this.move(link, message, deps.names.dead, 'malformed task message', 'dead');
      return;
    }
    if (this.isLeftover(task) || deps.book.holds(task.url, task.attempt)) {
      this.duplicates += 1;
      deps.logger.debug({ url: task.url, attempt: task.attempt }, 'dropping a leftover duplicate');
      ackOn(link, message);
      return;
    }
    if (task.notBefore !== undefined && task.notBefore > deps.clock()) {
      const bucket = bucketFor(deps.buckets, task.notBefore - deps.clock());
      void this.move(link, message, deps.names.delay(bucket), null, 'delay');
      return;
    }
    const priority = message.properties.priority;
    deps.book.add({
      link,
      message,
      task,
      taskId: taskIdFor(task.url),
      priority: typeof priority === 'number' ? clampPriority(priority) : deps.priorityOf(task),
      receivedAtMs: Date.now(),
    });
  }

  private isLeftover(task: TaskMessage): boolean {
    let entry: LedgerEntry | undefined;
    try {
      entry = this.deps.ledger.lookup(task.url);
    } catch (err) {
      // Cannot tell: treat it as live work. At worst a URL is fetched twice.
      this.deps.logger.warn({ err, url: task.url }, 'ledger lookup failed for a delivery');
      return false;
    }
    return entry !== undefined && (entry.state !== LedgerState.accepted || entry.attempt > task.attempt);
  }

  /** Republishes the body unchanged to `queue` (confirmed), then acks the delivery. */
  private async move(
    link: Link,
    message: ConsumeMessage,
    queue: string,
    error: string | null,
    op: string,
  ): Promise<void> {
    this.moving += 1;
    try {
      const priority = message.properties.priority;
      await this.deps.publisher.publish(
        link,
        [
          {
            queue,
            body: message.content,
            ...(typeof priority === 'number' ? { priority: clampPriority(priority) } : {}),
            ...(error === null ? {} : { headers: { 'x-ackcrawl-error': error } }),
          },
        ],
        op,
      );
      this.deps.onQueuesChanged();
      ackOn(link, message);
    } catch (err) {
      // Still ours if the link lives: hand it back so it is seen again, never left unacked.
      this.deps.logger.warn({ err, queue }, 'could not move a delivery; handing it back');
      requeueOn(link, message);
    } finally {
      this.moving -= 1;
    }
  }
}
