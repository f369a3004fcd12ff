import type { Logger } from '../../shared/logger.js';

export interface DrainWatch {
  /** Tasks (and robots.txt fetches) sent to crawlers and not finished. */
  holding: () => number;
  /** Crawlers still connected. */
  connected: () => number;
  timeoutMs: number;
  logger: Logger;
  /** How often to look (default 20 ms). */
  intervalMs?: number;
}

/**
 * A graceful stop's wait: resolves once crawlers hold nothing, none is connected, or `timeoutMs`
 * passed (real time: it waits for other processes). Says what it waits for, and what it gives up.
 */
export async function crawlersDrained(watch: DrainWatch): Promise<void> {
  const deadline = Date.now() + watch.timeoutMs;
  if (watch.holding() > 0) {
    watch.logger.info(
      { inFlight: watch.holding(), timeoutMs: watch.timeoutMs },
      'stopping: waiting for crawlers to drain',
    );
  }
  while (watch.holding() > 0 && watch.connected() > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, watch.intervalMs ?? 20));
  }
  if (watch.holding() > 0) {
    watch.logger.warn(
      { inFlight: watch.holding() },
      'drain deadline passed; handing back what is still in flight',
    );
  }
}
