import type { Link } from './broker-link.js';
import type { QueueNames } from './topology.js';

export interface QueueCountsValue {
  /** Ready messages in the tasks queue, not delivered to any consumer. */
  tasks: number;
  /** Messages waiting in the delay queues. */
  delayed: number;
}

/**
 * Message counts of the tasks and delay queues (passive declares, one round trip each), cached for
 * `cacheMs` so stats() four times a second stays cheap. The cache is dropped whenever this process
 * changes the queues (publish, nack) so a caller sees its own changes at once: the declares go on
 * the channel that made the change, and the broker answers them in order.
 */
export class QueueCounts {
  private cached: { link: Link; atMs: number; value: QueueCountsValue } | null = null;
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

  async read(link: Link): Promise<QueueCountsValue> {
    const now = Date.now();
    const hit = this.cached;
    if (hit !== null && hit.link === link && now - hit.atMs < this.cacheMs) return hit.value;
    const version = this.version;
    const channel = link.channel;
    const tasks = (await channel.checkQueue(this.names.tasks)).messageCount;
    let delayed = 0;
    for (const ms of this.buckets) delayed += (await channel.checkQueue(this.names.delay(ms))).messageCount;
    const value = { tasks, delayed };
    if (version === this.version) this.cached = { link, atMs: now, value };
    return value;
  }
}
