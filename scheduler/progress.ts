import type { FrontierStats } from '../shared/ports/frontier.js';

export interface CrawlProgress {
  done: number;
  failed: number;
  /** Of `done`, pages a recrawl found not modified (304). */
  notModified: number;
  ready: number;
  delayed: number;
  leased: number;
  total: number;
  inFlight: number;
  /** Pages settled per second over the last few seconds. */
  pagesPerSecond: number;
}

export interface CrawlSummary {
  /** Pages with a final outcome: ok + failed. */
  pages: number;
  ok: number;
  failed: number;
  /** Of `ok`, pages a recrawl found not modified (304, recorded without a body). */
  notModified: number;
  /** Pages settled by this run (a resumed crawl counts only its own). */
  settledThisRun: number;
  durationMs: number;
  pagesPerSecond: number;
}

/** Rates for the progress display and the summary. */
export class ProgressMeter {
  private startedAt: number;
  private settled = 0;
  private window: { at: number; count: number }[] = [];

  constructor(private readonly clock: () => number) {
    this.startedAt = clock();
  }

  /** A new crawl was submitted: rates and the summary count from now. */
  restart(): void {
    this.startedAt = this.clock();
    this.settled = 0;
    this.window = [];
  }

  record(count: number): void {
    this.settled += count;
    const now = this.clock();
    this.window.push({ at: now, count });
    while (this.window.length > 0 && (this.window[0] as { at: number }).at < now - 5000) this.window.shift();
  }

  progress(stats: FrontierStats, inFlight: number, notModified = 0): CrawlProgress {
    const now = this.clock();
    const recent = this.window.filter((w) => w.at >= now - 5000).reduce((sum, w) => sum + w.count, 0);
    const span = Math.min(5000, Math.max(1, now - this.startedAt));
    return {
      done: stats.done,
      failed: stats.failed,
      notModified,
      ready: stats.ready,
      delayed: stats.delayed,
      leased: stats.leased,
      total: stats.total,
      inFlight,
      pagesPerSecond: Math.round((recent / span) * 1000 * 10) / 10,
    };
  }

  summary(stats: FrontierStats, notModified = 0): CrawlSummary {
    const durationMs = Math.max(1, this.clock() - this.startedAt);
    return {
      pages: stats.done + stats.failed,
      ok: stats.done,
      failed: stats.failed,
      notModified,
      settledThisRun: this.settled,
      durationMs,
      pagesPerSecond: Math.round((this.settled / durationMs) * 1000 * 10) / 10,
    };
  }
}
