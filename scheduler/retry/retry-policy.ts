import { isRetriablePageError } from '../../shared/error-codes/index.js';

/**
 * The three retry tiers of the design, as one pure function: the first retriable failure is tried
 * again at once, the second after a delay (never sooner than a Retry-After), the third is final.
 * Non-retriable failures are final at once. Which codes are retriable is the error catalogue's
 * call (shared/error-codes/page.ts), not the crawler's: what a crawler reports counts only for a
 * code the catalogue does not know (a crawler of another version).
 */
export interface FailureFacts {
  code: string;
  /** What the crawler said of it; used only when the catalogue does not know `code`. */
  reportedRetriable: boolean;
  /** The attempt that just failed: 1 for the first fetch. */
  attempt: number;
  retryAfterMs: number | null;
}

export interface RetryPolicyOptions {
  retryDelayMs: number;
  maxAttempts: number;
}

export type RetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'final' };

export const DEFAULT_MAX_ATTEMPTS = 3;

export function decideRetry(facts: FailureFacts, options: RetryPolicyOptions): RetryDecision {
  const retriable = isRetriablePageError(facts.code, facts.reportedRetriable);
  return tier(retriable, facts.attempt, facts.retryAfterMs, options);
}

function tier(
  retriable: boolean,
  attempt: number,
  retryAfterMs: number | null,
  options: RetryPolicyOptions,
): RetryDecision {
  if (!retriable || attempt >= options.maxAttempts) return { kind: 'final' };
  const tierDelay = attempt === 1 ? 0 : options.retryDelayMs;
  return { kind: 'retry', delayMs: Math.max(tierDelay, retryAfterMs ?? 0) };
}

/**
 * Strikes (crashed crawlers a task was worked on by) at which an attempt is counted, and the last.
 * A page that kills every crawler it reaches gets a strike each try; an innocent page gets one when
 * its crawler happens to die while it runs (in a kill storm, about the fetch time over a crawler's
 * lifetime: a few percent). Two free strikes make a bystander's lost attempt need three such
 * deaths in a row and its final failure four, so a storm of crashes fails no innocent page in
 * practice, for the price of one more crashed crawler per poison page.
 */
export const CRASHES_COUNTING_AN_ATTEMPT = 3;
export const CRASHES_FINAL = 4;

export type CrashDecision = { kind: 'release' } | RetryDecision;

/**
 * A task was being worked on by a crawler that died without a goodbye, for the `strikes`-th time.
 * The first two times it goes back as it is (it may have been a bystander); the third time it costs
 * an attempt, a retriable failure through the retry tiers (so a task on its last attempt ends
 * there); the fourth time it is a final failure.
 */
export function decideAfterCrash(
  strikes: number,
  attempt: number,
  options: RetryPolicyOptions,
): CrashDecision {
  if (strikes < CRASHES_COUNTING_AN_ATTEMPT) return { kind: 'release' };
  if (strikes >= CRASHES_FINAL) return { kind: 'final' };
  return tier(true, attempt, null, options);
}
