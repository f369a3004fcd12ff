import { clampLevel } from '../../../protocol/task-priority.js';
import type { NewTask } from '../../../protocol/task.js';
import type { Outgoing } from './publisher.js';
import { encodeTaskMessage, newTaskMessage, type TaskMessage } from './task-message.js';
import { bucketFor, type QueueNames } from './topology.js';

/** The routing key of a task: its run, level and (hosts split among schedulers) shard, see topology.ts. */
export function taskRoutingKey(
  names: QueueNames,
  task: Pick<TaskMessage, 'runId' | 'priority' | 'host'>,
): string {
  return names.routingKey(task.runId, clampLevel(task.priority), names.shardOf(task.host));
}

/** Builds what push and settle publish: where each message goes, and with what. */
export class OutgoingMessages {
  constructor(
    private readonly names: QueueNames,
    private readonly buckets: readonly number[],
  ) {}

  /** A newly accepted task, ready at once. */
  fresh(task: NewTask): Outgoing {
    return this.ready(newTaskMessage(task));
  }

  /**
   * The next attempt: straight back to its run's level queue for delay 0, else into the delay
   * queue of the delay's bucket, due at `now + delayMs` (a message back before then goes round again).
   */
  retry(task: TaskMessage, delayMs: number, error: string, now: number): Outgoing {
    const { notBefore: _previous, ...rest } = task;
    return this.after({ ...rest, attempt: task.attempt + 1, lastError: error }, delayMs, now);
  }

  /**
   * The same attempt, set aside for `delayMs` (its host cannot take it sooner): into the delay
   * queue of the delay's bucket, due at `now + delayMs`. Attempt and last error are unchanged.
   */
  park(task: TaskMessage, delayMs: number, now: number): Outgoing {
    const { notBefore: _previous, ...rest } = task;
    return this.after(rest, delayMs, now);
  }

  /** A final failure, for a person to look at: the last error in the body and in the headers. */
  dead(task: TaskMessage, error: string, now: number): Outgoing {
    const { notBefore: _previous, ...rest } = task;
    return {
      exchange: '',
      routingKey: this.names.failed,
      body: encodeTaskMessage({ ...rest, lastError: error }),
      headers: {
        // Headers share a 64 KiB frame table with the rest; the body keeps the whole error.
        'x-ackcrawl-error': error.length > 1_000 ? `${error.slice(0, 1_000)}…` : error,
        'x-ackcrawl-attempt': task.attempt,
        'x-ackcrawl-run': task.runId,
        'x-ackcrawl-failed-at': new Date(now).toISOString(),
      },
    };
  }

  /** Ready at once for delay 0, else into the delay queue of the delay's bucket, due at now + delay. */
  private after(message: TaskMessage, delayMs: number, now: number): Outgoing {
    if (delayMs <= 0) return this.ready(message);
    return {
      exchange: this.names.wait(bucketFor(this.buckets, delayMs)),
      routingKey: taskRoutingKey(this.names, message),
      body: encodeTaskMessage({ ...message, notBefore: now + delayMs }),
    };
  }

  private ready(message: TaskMessage): Outgoing {
    return {
      exchange: this.names.readyExchange,
      routingKey: taskRoutingKey(this.names, message),
      body: encodeTaskMessage(message),
    };
  }
}
