/**
 * How long a host cools down after a 429 or 503: the server's Retry-After when it gave one, else
 * exponential backoff (base × 2^(n−1) for the n-th in a row) with jitter, so hosts that failed
 * together do not all come back at the same moment. Both are capped by `maxMs`.
 */
export function cooldownMs(
  input: { retryAfterMs: number | null; streak: number },
  options: { baseMs: number; maxMs: number; random: () => number },
): { ms: number; capped: boolean } {
  if (input.retryAfterMs !== null && input.retryAfterMs >= 0) {
    return { ms: Math.min(input.retryAfterMs, options.maxMs), capped: input.retryAfterMs > options.maxMs };
  }
  const exponent = Math.min(Math.max(0, input.streak - 1), 30);
  const backoff = Math.min(options.baseMs * 2 ** exponent, options.maxMs);
  // "Equal jitter": half fixed, half random, so a cool-down never collapses to nothing.
  return { ms: Math.round(backoff / 2 + (backoff / 2) * options.random()), capped: false };
}

/** Statuses that ask a client to slow down. */
export function isSlowDownStatus(status: number | null): boolean {
  return status === 429 || status === 503;
}
