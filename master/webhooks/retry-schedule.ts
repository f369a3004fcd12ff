/** When a failed delivery is tried again: exponential backoff with jitter, or what Retry-After says. */
export interface RetrySchedule {
  /** First retry after about this long (doubling each attempt). */
  baseMs: number;
  /** No backoff longer than this. */
  maxMs: number;
  /** Attempts in all before a delivery is `failed`. */
  maxAttempts: number;
}

/** The longest Retry-After obeyed: a receiver asking for more is tried again after a day. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Delay before attempt `attempts + 1`, after `attempts` failed ones: base·2^(attempts−1), capped,
 * with "equal jitter" (half fixed, half random) so that endpoints failing together do not come
 * back together.
 */
export function backoffMs(
  schedule: RetrySchedule,
  attempts: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/** A Retry-After header (seconds, or an HTTP date) as a delay from `now`; null when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (header === undefined) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Math.min(MAX_RETRY_AFTER_MS, Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}
