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
