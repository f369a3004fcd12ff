import type { Link } from './broker-link.js';
import { runQueueNames, type QueueNames } from './topology.js';

export interface QueueCountsValue {
  /** Ready messages in each run's level queues (of every shard), not delivered to any consumer. */
  runs: ReadonlyMap<string, number>;
  /** Messages waiting in the delay queues (of every run: they are shared). */
  waiting: number;
}

/**
 * Message counts of the runs' level queues and of the delay queues (passive declares, one round
 * trip each), cached for `cacheMs` so stats() four times a second stays cheap. The cache is
 * dropped whenever this process changes the queues (publish, nack) so a caller sees its own
 * changes at once: the declares go on the channel that made the change, and the broker answers
 * them in order. Only runs whose queues exist may be asked for (a passive declare of a missing
 * queue closes the channel).
 */
export class QueueCounts {
  private cached: { link: Link; atMs: number; key: string; value: QueueCountsValue } | null = null;
  /** Bumped by invalidate(), so a read that overlapped a change does not cache what it saw. */
  private version = 0;

  constructor(
    private readonly names: QueueNames,
    private readonly buckets: readonly number[],
    private readonly cacheMs: number,
  ) {}

  invalidate(): void {
    this.cached = null;
    this.version += 1;
  }

  async read(link: Link, runIds: readonly string[]): Promise<QueueCountsValue> {
    const now = Date.now();
    const key = [...runIds].sort().join(' ');
    const hit = this.cached;
    if (hit !== null && hit.link === link && hit.key === key && now - hit.atMs < this.cacheMs)
      return hit.value;
    const version = this.version;
    const channel = link.channel;
    const runs = new Map<string, number>();
    for (const runId of runIds) {
      let n = 0;
      for (const queue of runQueueNames(this.names, runId)) {
        n += (await channel.checkQueue(queue)).messageCount;
      }
      runs.set(runId, n);
    }
    let waiting = 0;
    for (const ms of this.buckets) waiting += (await channel.checkQueue(this.names.wait(ms))).messageCount;
    const value = { runs, waiting };
    if (version === this.version) this.cached = { link, atMs: now, key, value };
    return value;
  }
}
