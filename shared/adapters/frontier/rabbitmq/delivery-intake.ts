import type { ConsumeMessage } from 'amqplib';
import type { Logger } from '../../../logger.js';
import { ackOn, requeueOn, type Link } from './broker-link.js';
import { LedgerState, type Ledger, type LedgerEntry } from './ledger.js';
import type { LeaseBook } from './lease-book.js';
import type { Publisher } from './publisher.js';
import { clampLevel } from '../../../protocol/task-priority.js';
import { taskRoutingKey } from './outgoing-messages.js';
import { decodeTaskMessage, taskIdFor, type TaskMessage } from './task-message.js';
import { bucketFor, type QueueNames } from './topology.js';

export interface DeliveryIntakeDeps {
  ledger: Ledger;
  book: LeaseBook;
  publisher: Publisher;
  names: QueueNames;
  buckets: readonly number[];
  clock: () => number;
  logger: Logger;
  /** Declares a run's queues on the link if this link has not yet (see RabbitFrontier). */
  ensureRunQueues: (link: Link, runId: string) => Promise<void>;
  /** This process changed what the queues hold. */
  onQueuesChanged: () => void;
  /** A delivery went into the lease book. */
  onBuffered: () => void;
  /**
   * A failed URL this process is putting back (Frontier.requeue): its new message may arrive
   * before the ledger says accepted, and is not a leftover.
   */
  requeueing: (runId: string, url: string) => boolean;
}

/**
 * Where every delivery lands first. Most go to the lease book. Four kinds do not:
 * - a task of a cancelled run: acked and dropped (counted in `cancelledDropped`);
 * - leftovers of a crash (the ledger already has the URL's outcome, or a newer attempt was
 *   published, or this process already holds a copy): acked and counted as duplicates, never
 *   fetched again. Dropping a second copy is safe: the first is unacked here, so if this process
 *   or its link dies the broker still has it;
 * - a retry back from its delay queue before its due time (the delay was longer than the largest
 *   bucket): sent round the delay queues again;
 * - a body that is not a task message: moved to the failed queue as it is.
 * Deliveries of the orphans queue (see topology.ts) are routed again to their run's level queue,
 * dropped if the run was cancelled, or moved to the failed queue if the run is over (retired).
 */
export class DeliveryIntake {
  /** Leftover messages dropped because the ledger knew better. */
  duplicates = 0;
  /** Messages being moved to a delay queue (counted as delayed) or to the failed queue. */
  moving = 0;
  /** Messages of cancelled runs dropped on delivery. */
  cancelledDropped = 0;

  constructor(private readonly deps: DeliveryIntakeDeps) {}

  accept(link: Link, message: ConsumeMessage): void {
    if (!link.alive) return;
    const { deps } = this;
    const task = this.decode(link, message);
    if (task === null || this.droppedAsCancelled(link, message, task)) return;
    if (this.isLeftover(task) || deps.book.holds(task, task.attempt)) {
      this.duplicates += 1;
      deps.logger.debug({ url: task.url, attempt: task.attempt }, 'dropping a leftover duplicate');
      ackOn(link, message);
      return;
    }
    if (task.notBefore !== undefined && task.notBefore > deps.clock()) {
      const bucket = bucketFor(deps.buckets, task.notBefore - deps.clock());
      void this.move(link, message, deps.names.wait(bucket), taskRoutingKey(deps.names, task), null, 'delay');
      return;
    }
    deps.book.add({
      link,
      message,
      task,
      taskId: taskIdFor(task.runId, task.url),
      priority: clampLevel(task.priority),
      receivedAtMs: Date.now(),
    });
    deps.onBuffered();
  }

  /** A message no run queue took (its run's queues were deleted, or never declared on this broker). */
  acceptOrphan(link: Link, message: ConsumeMessage): void {
    if (!link.alive) return;
    const task = this.decode(link, message);
    if (task === null || this.droppedAsCancelled(link, message, task)) return;
    const { deps } = this;
    if (deps.ledger.isRetired(task.runId)) {
      this.endedRunTask(link, message, task);
      return;
    }
    // A run the ledger does not know (its push crashed before the ledger write) is recorded, so
    // that its queues are consumed from now on.
    try {
      deps.ledger.ensureRuns([task.runId]);
    } catch (err) {
      deps.logger.warn(
        { err, runId: task.runId },
        'could not record the run of an orphaned task; handing it back',
      );
      requeueOn(link, message);
      return;
    }
    void deps
      .ensureRunQueues(link, task.runId)
      .then(() =>
        this.move(link, message, deps.names.readyExchange, taskRoutingKey(deps.names, task), null, 'orphan'),
      )
      .catch((err: unknown) => {
        deps.logger.warn({ err, runId: task.runId }, 'could not route an orphaned task; handing it back');
        requeueOn(link, message);
      });
  }

  /**
   * A task of a run that is over (retired) came back: a leftover is dropped as usual; anything else
   * means the run was found finished too early, and the task goes to the failed queue, kept for a
   * person, rather than round the orphans queue forever.
   */
  private endedRunTask(link: Link, message: ConsumeMessage, task: TaskMessage): void {
    if (this.isLeftover(task)) {
      this.duplicates += 1;
      ackOn(link, message);
      return;
    }
    this.deps.logger.warn(
      { runId: task.runId, url: task.url },
      'a task of a run that is over came back; it goes to the failed queue',
    );
    void this.move(link, message, '', this.deps.names.failed, 'its run was over when it came back', 'dead');
  }

  private decode(link: Link, message: ConsumeMessage): TaskMessage | null {
    const task = decodeTaskMessage(message.content);
    if (task === null) {
      void this.move(link, message, '', this.deps.names.failed, 'malformed task message', 'dead');
    }
    return task;
  }

  private droppedAsCancelled(link: Link, message: ConsumeMessage, task: TaskMessage): boolean {
    if (this.deps.ledger.stateOf(task.runId) !== 'cancelled') return false;
    this.cancelledDropped += 1;
    ackOn(link, message);
    return true;
  }

  private isLeftover(task: TaskMessage): boolean {
    let entry: LedgerEntry | undefined;
    try {
      entry = this.deps.ledger.lookup(task.runId, task.url);
    } catch (err) {
      // Cannot tell: treat it as live work. At worst a URL is fetched twice.
      this.deps.logger.warn({ err, url: task.url }, 'ledger lookup failed for a delivery');
      return false;
    }
    if (entry?.state === LedgerState.failed && this.deps.requeueing(task.runId, task.url)) return false;
    return entry !== undefined && (entry.state !== LedgerState.accepted || entry.attempt > task.attempt);
  }

  /** Republishes the body unchanged to `exchange` under `routingKey` (confirmed), then acks the delivery. */
  private async move(
    link: Link,
    message: ConsumeMessage,
    exchange: string,
    routingKey: string,
    error: string | null,
    op: string,
  ): Promise<void> {
    this.moving += 1;
    try {
      await this.deps.publisher.publish(
        link,
        [
          {
            exchange,
            routingKey,
            body: message.content,
            ...(error === null ? {} : { headers: { 'x-ackcrawl-error': error } }),
          },
        ],
        op,
      );
      this.deps.onQueuesChanged();
      ackOn(link, message);
    } catch (err) {
      // Still ours if the link lives: hand it back so it is seen again, never left unacked.
      this.deps.logger.warn({ err, exchange, routingKey }, 'could not move a delivery; handing it back');
      requeueOn(link, message);
    } finally {
      this.moving -= 1;
    }
  }
}
