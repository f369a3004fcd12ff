/**
 * The three retry tiers of the design, as one pure function: the first retriable failure is tried
 * again at once, the second after a delay (never sooner than a Retry-After), the third is final.
 * Non-retriable failures are final at once.
 */
export interface FailureFacts {
  retriable: boolean;
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
  if (!facts.retriable || facts.attempt >= options.maxAttempts) return { kind: 'final' };
  const tierDelay = facts.attempt === 1 ? 0 : options.retryDelayMs;
  return { kind: 'retry', delayMs: Math.max(tierDelay, facts.retryAfterMs ?? 0) };
}

/** Strikes (crashed crawlers a task was worked on by) at which an attempt is counted, and the last. */
export const CRASHES_COUNTING_AN_ATTEMPT = 2;
export const CRASHES_FINAL = 3;

export type CrashDecision = { kind: 'release' } | RetryDecision;

/**
 * A task was being worked on by a crawler that died without a goodbye, for the `strikes`-th time.
 * The first time it goes back as it is (it may have been a bystander); the second time it costs
 * an attempt, a retriable failure through the retry tiers (so a task on its last attempt ends
 * there); the third time it is a final failure.
 */
export function decideAfterCrash(
  strikes: number,
  attempt: number,
  options: RetryPolicyOptions,
): CrashDecision {
  if (strikes < CRASHES_COUNTING_AN_ATTEMPT) return { kind: 'release' };
  if (strikes >= CRASHES_FINAL) return { kind: 'final' };
  return decideRetry({ retriable: true, attempt, retryAfterMs: null }, options);
}
