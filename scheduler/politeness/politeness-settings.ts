import { crawlDefaults, type CrawlSettings } from '../../shared/crawl-settings/index.js';
import type { HostRule } from '../../shared/politeness/host-rules.js';

/** A job's politeness, enforced by the scheduler for the whole fleet. */
export interface PolitenessSettings {
  /** Requests in flight at once to one host, unless a host rule says otherwise. */
  concurrency: number;
  /** Minimum ms between two request starts to one host, unless a host rule says otherwise. */
  delayMs: number;
  hostRules: readonly HostRule[];
  /** Every host's delay follows its response time (a host rule can turn it on for some hosts only). */
  adaptiveDelay: boolean;
  /** Adaptive target: the delay tends to this many times the host's response time. */
  adaptiveFactor: number;
  /** Ceiling of an adaptive delay. */
  maxAdaptiveDelayMs: number;
  /** A robots.txt Crawl-delay above this slows the host to this, with a warning. */
  maxCrawlDelayMs: number;
  /** First cool-down after a 429/503 without Retry-After; doubles with each one in a row. */
  cooldownBaseMs: number;
  /** Longest cool-down, Retry-After included (a longer one is cut to this, with a warning). */
  maxCooldownMs: number;
}

/** The politeness the gate enforces for a crawl's settings (their names are the user's). */
export function politenessOf(
  job: Pick<
    CrawlSettings,
    | 'hostConcurrency'
    | 'hostDelayMs'
    | 'hostRules'
    | 'adaptiveDelay'
    | 'adaptiveFactor'
    | 'maxAdaptiveDelayMs'
    | 'maxCrawlDelayMs'
    | 'cooldownBaseMs'
    | 'maxCooldownMs'
  >,
): PolitenessSettings {
  return {
    concurrency: job.hostConcurrency,
    delayMs: job.hostDelayMs,
    hostRules: job.hostRules,
    adaptiveDelay: job.adaptiveDelay,
    adaptiveFactor: job.adaptiveFactor,
    maxAdaptiveDelayMs: job.maxAdaptiveDelayMs,
    maxCrawlDelayMs: job.maxCrawlDelayMs,
    cooldownBaseMs: job.cooldownBaseMs,
    maxCooldownMs: job.maxCooldownMs,
  };
}

/** The politeness of a crawl that sets none (shared/crawl-settings has the defaults). */
export const DEFAULT_POLITENESS: PolitenessSettings = politenessOf(crawlDefaults());

/**
 * The delay runs from when the crawler reports that a request went out; the request reaches the
 * server a little after that, by a time that varies (network, the server's own event loop). A
 * small margin on top of the delay keeps the gap between two starts, as the server sees them, at
 * or above the delay.
 */
export function startMarginMs(delayMs: number): number {
  if (delayMs <= 0) return 0;
  return Math.min(100, Math.max(10, Math.round(delayMs * 0.1)));
}
