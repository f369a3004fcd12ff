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

  start(send: ((message: unknown) => boolean) | undefined = process.send?.bind(process)): void {
    if (!send) return;
    process.channel?.unref();
    const tell = (): void => {
      try {
        // Not a callback: a gone agent's channel only drops it (the crawler stops on its own then).
        send({ type: 'crawler-stats', ...this.stats });
      } catch {
        // the channel closed
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
