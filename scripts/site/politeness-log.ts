/**
 * What one host of the many-hosts site (hosts-site.ts) checks of the requests it gets: the
 * politeness a crawl was given, as ackcrawl defines it (docs/politeness.md) — at most
 * `concurrency` requests in flight at once, and at least `delayMs` between two request *starts*
 * (start to start, not end to start). A request is in flight from its arrival (its head parsed)
 * until its response is handed to the socket.
 *
 * The server's clock runs on its own event loop: two arrivals can be stamped a few ms closer than
 * they left the crawler when the loop is busy, so a gap counts as a violation only when it is more
 * than `toleranceMs` short of the delay. Concurrency gets no tolerance: a response is counted done
 * before its bytes can reach the crawler, so a polite crawler can never overlap it.
 */
export interface HostPoliteness {
  concurrency: number;
  delayMs: number;
  toleranceMs: number;
}

export interface PolitenessFigures {
  requests: number;
  /** Arrivals that found `concurrency` requests already in flight. */
  concurrencyViolations: number;
  /** Arrivals less than `delayMs - toleranceMs` after the previous arrival. */
  delayViolations: number;
  maxInFlight: number;
  /** Smallest start-to-start gap seen, ms (null before a second request). */
  minGapMs: number | null;
  /** Mean start-to-start gap, ms (null before a second request). */
  meanGapMs: number | null;
  /** First and last arrival, ms on the clock `arrive` is given (null before the first). */
  firstAt: number | null;
  lastAt: number | null;
}

export class PolitenessLog {
  private inFlight = 0;
  private lastArrival: number | null = null;
  private figures: PolitenessFigures = emptyFigures();

  constructor(private readonly rules: HostPoliteness) {}

  /** A request arrived at `now` (ms, a monotonic clock). */
  arrive(now: number): void {
    const f = this.figures;
    f.requests += 1;
    if (this.inFlight >= this.rules.concurrency) f.concurrencyViolations += 1;
    this.inFlight += 1;
    f.maxInFlight = Math.max(f.maxInFlight, this.inFlight);
    if (this.lastArrival !== null) {
      const gap = now - this.lastArrival;
      f.minGapMs = f.minGapMs === null ? gap : Math.min(f.minGapMs, gap);
      if (gap < this.rules.delayMs - this.rules.toleranceMs) f.delayViolations += 1;
    }
    f.firstAt ??= now;
    f.lastAt = now;
    f.meanGapMs = f.requests > 1 ? (now - f.firstAt) / (f.requests - 1) : null;
    this.lastArrival = now;
  }

  /** A request's response was sent, or its connection closed first. */
  leave(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  stats(): PolitenessFigures {
    return { ...this.figures };
  }

  /** Zeroes the figures for the next runner; requests still in flight stay counted. */
  reset(): void {
    this.figures = emptyFigures();
    this.lastArrival = null;
  }
}

function emptyFigures(): PolitenessFigures {
  return {
    requests: 0,
    concurrencyViolations: 0,
    delayViolations: 0,
    maxInFlight: 0,
    minGapMs: null,
    meanGapMs: null,
    firstAt: null,
    lastAt: null,
  };
}
