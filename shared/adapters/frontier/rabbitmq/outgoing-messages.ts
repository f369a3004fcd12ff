import type { NewTask } from '../../../protocol/task.js';
import type { Outgoing } from './publisher.js';
import { encodeTaskMessage, newTaskMessage, type TaskMessage } from './task-message.js';
import { bucketFor, type QueueNames } from './topology.js';

/** Builds what push and settle publish: where each message goes, and with what. */
export class OutgoingMessages {
  constructor(
    private readonly names: QueueNames,
    private readonly buckets: readonly number[],
    private readonly priorityOf: (task: NewTask) => number,
  ) {}

  /** A newly accepted task, ready at once. */
  fresh(task: NewTask): Outgoing {
    return this.ready(newTaskMessage(task));
  }

  /**
   * The next attempt: straight back to the tasks queue for delay 0, else into the delay queue of
   * the delay's bucket, due at `now + delayMs` (a message back before then goes round again).
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
      queue: this.names.dead,
      body: encodeTaskMessage({ ...rest, lastError: error }),
      headers: {
        // Headers share a 64 KiB frame table with the rest; the body keeps the whole error.
        'x-ackcrawl-error': error.length > 1_000 ? `${error.slice(0, 1_000)}…` : error,
        'x-ackcrawl-attempt': task.attempt,
        'x-ackcrawl-failed-at': new Date(now).toISOString(),
      },
    };
  }

  /** Ready at once for delay 0, else into the delay queue of the delay's bucket, due at now + delay. */
  private after(message: TaskMessage, delayMs: number, now: number): Outgoing {
    if (delayMs <= 0) return this.ready(message);
    return {
      queue: this.names.delay(bucketFor(this.buckets, delayMs)),
      body: encodeTaskMessage({ ...message, notBefore: now + delayMs }),
      priority: this.priorityOf(message),
    };
  }

  private ready(message: TaskMessage): Outgoing {
    return { queue: this.names.tasks, body: encodeTaskMessage(message), priority: this.priorityOf(message) };
  }
}
