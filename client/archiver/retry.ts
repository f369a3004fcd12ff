import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Stops retrying (the promise rejects with the signal's reason) once aborted. */
  signal: AbortSignal;
  /** Doubles from here, with ±20 % jitter… */
  initialDelayMs?: number;
  /** …up to here. */
  maxDelayMs?: number;
  onFailure: (err: unknown, attempt: number, retryInMs: number) => void;
}

/**
 * Runs `fn` until it succeeds or `signal` aborts. Every failure is retried, not only retriable
 * ones: a partition cannot move past a batch that is not stored (its offsets stay uncommitted), so
 * giving up would only stall it differently; `onFailure` lets the caller say how bad a failure is.
 */
export async function retryUntilDone<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const { signal, initialDelayMs = 200, maxDelayMs = 10_000 } = options;
  for (let attempt = 1; ; attempt += 1) {
    signal.throwIfAborted();
    try {
      return await fn();
    } catch (err) {
      signal.throwIfAborted();
      const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 20));
      const retryInMs = Math.round(base * (0.8 + Math.random() * 0.4));
      options.onFailure(err, attempt, retryInMs);
      await sleep(retryInMs, undefined, { signal });
    }
  }
}
