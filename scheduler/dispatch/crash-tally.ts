import type { Lease } from '../../shared/protocol/task.js';
import { CRASHES_COUNTING_AN_ATTEMPT } from '../retry/retry-policy.js';

/** The code of a task settled because crawlers kept dying while they worked on it. */
export const CRAWLER_CRASHED = 'CRAWLER_CRASHED';

/** How many tasks the tally remembers at most: about 100 bytes each. */
export const DEFAULT_TALLY_SIZE = 50_000;

type TaskRef = Pick<Lease, 'taskId' | 'lastError'>;

/**
 * How many times each task was being worked on by a crawler whose connection then ended without a
 * goodbye (killed, crashed, hung past its heartbeats): a "strike". A task that kills every crawler
 * it reaches gets a strike each time; so may an innocent task that shared a crawler with it, which
 * is why the first strikes only put the task back (see decideAfterCrash in scheduler/retry).
 *
 * Bounded: at most `maxEntries` tasks, the least recently struck forgotten first; a task is
 * forgotten when it is settled for good. The strike that costs an attempt gives its retry
 * `CRAWLER_CRASHED` as the task's last error in the frontier: that strike is read back from there
 * after a scheduler restart or an eviction.
 */
export class CrashTally {
  private readonly strikes = new Map<string, number>();

  constructor(private readonly maxEntries = DEFAULT_TALLY_SIZE) {}

  get size(): number {
    return this.strikes.size;
  }

  /** Strikes the task has so far. */
  count(task: TaskRef): number {
    const known = this.strikes.get(task.taskId) ?? 0;
    return Math.max(
      known,
      task.lastError?.startsWith(CRAWLER_CRASHED) === true ? CRASHES_COUNTING_AN_ATTEMPT : 0,
    );
  }

  /** The task was in flight on a crawler that died before. */
  isSuspect(task: TaskRef): boolean {
    return this.count(task) > 0;
  }

  /** One more strike; returns the task's count. */
  strike(task: TaskRef): number {
    const count = this.count(task) + 1;
    this.strikes.delete(task.taskId);
    if (this.strikes.size >= this.maxEntries) {
      const oldest = this.strikes.keys().next().value;
      if (oldest !== undefined) this.strikes.delete(oldest);
    }
    this.strikes.set(task.taskId, count);
    return count;
  }

  forget(taskId: string): void {
    this.strikes.delete(taskId);
  }
}
