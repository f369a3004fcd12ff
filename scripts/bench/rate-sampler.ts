import type { SiteStats } from '../site/generated-site.js';

/** Distinct pages the site had served at a moment of the run (ms from the sampler's start). */
export interface RateSample {
  atMs: number;
  pages: number;
}

/**
 * Asks the site for its counters every `everyMs` while a runner crawls it, one question at a time
 * (the site answers over one IPC channel), so a long run's pages/s can be told at its start and at
 * its end: a crawl that slows down as it grows shows it there, not in the mean.
 */
export class RateSampler {
  private readonly samples: RateSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private pending: Promise<void> = Promise.resolve();
  private readonly started = Date.now();

  constructor(
    private readonly stats: () => Promise<SiteStats>,
    everyMs = 500,
  ) {
    this.timer = setInterval(() => {
      this.pending = this.pending.then(() =>
        this.stats().then(
          (s) => void this.samples.push({ atMs: Date.now() - this.started, pages: s.distinctPages }),
          () => undefined,
        ),
      );
    }, everyMs);
  }

  /** Stops asking; resolves once the last question is answered, with every sample. */
  async stop(): Promise<RateSample[]> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pending;
    return this.samples;
  }
}

/**
 * Pages/s over the first and the last `fraction` of the `total` pages, from the samples: the start
 * counts from the first sample with a page served (start-up left out), the end up to the first
 * sample with every page. Null where the samples are too few to tell.
 */
export function edgeRates(
  samples: readonly RateSample[],
  total: number,
  fraction = 0.1,
): { start: number | null; end: number | null } {
  const span = total * fraction;
  const rate = (a: RateSample | undefined, b: RateSample | undefined): number | null =>
    a && b && b.atMs > a.atMs && b.pages > a.pages
      ? Math.round(((b.pages - a.pages) * 1000) / (b.atMs - a.atMs))
      : null;
  const first = samples.find((s) => s.pages > 0);
  const startEnd = first ? samples.find((s) => s.pages >= first.pages + span) : undefined;
  const done = samples.find((s) => s.pages >= total) ?? samples[samples.length - 1];
  const endStart = done ? [...samples].reverse().find((s) => s.pages <= done.pages - span) : undefined;
  return { start: rate(first, startEnd), end: rate(endStart, done) };
}
