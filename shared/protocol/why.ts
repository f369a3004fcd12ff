import type { HostRule } from '../politeness/host-rules.js';
import type { Lease } from './task.js';

/**
 * The file in an embedded crawl's output folder that says where its running scheduler's API is
 * (`{ api, pid, token? }`, owner-only): `ackcrawl why --out DIR` reads it, the scheduler writes it.
 */
export const SCHEDULER_FILE = 'scheduler.json';

/**
 * The answer to "why not yet?" for one URL (`GET /why?url=…` on the scheduler, `ackcrawl why`):
 * where the URL is in the crawl and what it waits for.
 */
export type WhyState =
  | 'out-of-scope'
  | 'robots-denied'
  | 'not-discovered'
  | 'queued'
  | 'waiting'
  | 'retrying'
  | 'in-flight'
  | 'done'
  | 'failed'
  /** The run has ended and kept no failure of the URL (the master's answer for a run no scheduler hosts). */
  | 'run-ended';

export interface WhyAnswer {
  /** The URL as asked. */
  url: string;
  /** Its normalised form, the one the crawl keys on. */
  normalized: string;
  state: WhyState;
  /** One sentence for a person. */
  reason: string;
  /** Set when the URL asked for is another spelling of a URL the crawl holds. */
  duplicateOf: string | null;
  /** The frontier's view: attempt, last error, when a delayed retry is due. */
  task: {
    state: string;
    attempt: number;
    lastError: string | null;
    availableAt: string | null;
    depth: number | null;
    parentUrl: string | null;
  } | null;
  /** The host's politeness right now (why it may not start a request yet). */
  host: HostPolitenessView | null;
  /** Which crawler has it, when in flight. */
  crawler: { crawlerId: string; sessionId: string; since: string } | null;
  /** What robots.txt says, when the crawl knows. */
  robots: { state: string; line: number | null; rule: string | null; until: string | null } | null;
}

/** A host's politeness as the APIs show it (why and a run's hosts): times as ISO strings. */
export interface HostPolitenessView {
  host: string;
  inFlight: number;
  concurrency: number;
  delayMs: number;
  crawlDelayMs: number | null;
  /** When the next request may start; null: at once. */
  nextStartAt: string | null;
  pausedUntil: string | null;
  pauseReason: string | null;
}

/** The view of the host gate's explanation at `now`. */
export function hostPolitenessView(p: HostPoliteness, now: number): HostPolitenessView {
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return {
    host: p.host,
    inFlight: p.inFlight,
    concurrency: p.concurrency,
    delayMs: p.delayMs,
    crawlDelayMs: p.crawlDelayMs,
    nextStartAt: p.nextStartAt > now ? iso(p.nextStartAt) : null,
    pausedUntil: iso(p.pausedUntil),
    pauseReason: p.pauseReason,
  };
}

/** Why a host may not start a request now (the scheduler's host gate explains it). */
export interface HostPoliteness {
  host: string;
  inFlight: number;
  concurrency: number;
  /** The delay in force: the job's or the rule's, raised by Crawl-delay and the adaptive delay. */
  delayMs: number;
  crawlDelayMs: number | null;
  adaptiveDelayMs: number | null;
  /** The host rule that applies, if any. */
  rule: HostRule | null;
  /** When the next request may start (ms since the epoch); `now` or earlier: at once. */
  nextStartAt: number;
  /** Set while the host cools down (429/503) or is deferred (robots.txt unreachable, say). */
  pausedUntil: number | null;
  pauseReason: string | null;
}

/** Where the scheduler's dispatcher holds a URL's task, if it does. */
export type Located =
  { where: 'buffer'; lease: Lease } | { where: 'in-flight'; lease: Lease; sessionId: string; sentAt: number };
