import type { Logger } from '../../shared/logger.js';
import type { Frontier, RunLimit } from '../../shared/ports/frontier.js';
import type { NewTask } from '../../shared/protocol/task.js';

/**
 * Pushes the root sitemaps of hosts whose robots.txt was just read into the frontier. A failed push
 * is kept and tried again on the next `flush` (the scheduler's tick); a crash loses nothing that
 * matters, as robots.txt is read again after a restart and the frontier drops repeats.
 */
export class SitemapSeeder {
  private pending: NewTask[] = [];
  private pushing: Promise<void> | null = null;

  constructor(
    private readonly options: {
      frontier: Frontier;
      logger: Logger;
      /** Each run's limit (0 or undefined: none). */
      maxTotal: RunLimit;
      onPushed: (accepted: number) => void;
    },
  ) {}

  queue(tasks: readonly NewTask[]): void {
    if (tasks.length === 0) return;
    this.pending.push(...tasks);
    void this.flush();
  }

  flush(): Promise<void> {
    if (this.pushing || this.pending.length === 0) return this.pushing ?? Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    this.pushing = (async () => {
      try {
        const accepted = await this.options.frontier.push(batch, { maxTotal: this.options.maxTotal });
        if (accepted.length > 0) {
          this.options.logger.info({ sitemaps: accepted.map((t) => t.url) }, 'sitemaps queued');
        }
        this.options.onPushed(accepted.length);
      } catch (err) {
        this.options.logger.warn({ err, tasks: batch.length }, 'could not queue sitemaps; trying again');
        this.pending.unshift(...batch);
      } finally {
        this.pushing = null;
      }
    })();
    return this.pushing;
  }
}
