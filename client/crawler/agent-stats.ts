import { CRAWLER_STATS_EVERY_MS, type CrawlerStats } from '../../shared/protocol/crawler-stats.js';

/**
 * The crawler's counters for its agent: tasks in flight, done, failed. Sent once a second over the
 * IPC channel the agent opened (none when started otherwise), never holding the process open.
 */
export class AgentStats {
  private readonly stats: CrawlerStats = { inFlight: 0, pagesDone: 0, errors: 0 };
  private timer: NodeJS.Timeout | null = null;

  /** Wraps one task's work: counted in flight while it runs, done when it ends. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.stats.inFlight += 1;
    try {
      return await work();
    } finally {
      this.stats.inFlight -= 1;
      this.stats.pagesDone += 1;
    }
  }

  failed(): void {
    this.stats.errors += 1;
  }

  start(): void {
    if (!process.send) return;
    process.channel?.unref();
    const tell = (): void => {
      if (!process.connected) return;
      try {
        // With a callback, a failed write is handed to it rather than thrown as an 'error' event:
        // a gone agent only drops the message (the crawler notices it is orphaned on its own).
        process.send?.({ type: 'crawler-stats', ...this.stats }, undefined, {}, () => undefined);
      } catch {
        // the channel closed between the check and the send
      }
    };
    tell();
    this.timer = setInterval(tell, CRAWLER_STATS_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
