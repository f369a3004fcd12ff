import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';

export interface StallReportOptions {
  logger: Logger;
  clock: () => number;
  /** The same failure is logged at most once per this interval while it lasts. */
  intervalMs: number;
}

/**
 * What an operator reads while outcomes cannot be made durable (a full disk, a store that is down
 * or refuses our credentials): the error once when the stall starts, again once per interval
 * while it lasts or as soon as it changes, never once per retry; and one line when it ends, with
 * how long it took.
 */
export class StallReport {
  private since: number | null = null;
  private attempts = 0;
  private lastCode: string | null = null;
  private lastLoggedAt = 0;

  constructor(private readonly options: StallReportOptions) {}

  /** The code of the last failure of the stall going on (UNKNOWN for an uncoded one); null when none is. */
  get code(): string | null {
    return this.since === null ? null : this.lastCode;
  }

  failed(err: unknown, context: Record<string, unknown>): void {
    const now = this.options.clock();
    this.since ??= now;
    this.attempts += 1;
    const code = err instanceof AppError ? err.code : 'UNKNOWN';
    if (code === this.lastCode && now - this.lastLoggedAt < this.options.intervalMs) return;
    this.lastCode = code;
    this.lastLoggedAt = now;
    const message = err instanceof Error ? err.message : String(err);
    const details = err instanceof AppError ? err.details : undefined;
    this.options.logger.error(
      { err, code, ...details, ...context, stalledMs: now - this.since, attempts: this.attempts },
      `outcomes cannot be made durable (${code}): ${message}. Nothing is acknowledged until they are; ` +
        `retrying with backoff (this is logged again in ${Math.round(this.options.intervalMs / 1000)} s if it lasts)`,
    );
  }

  recovered(): void {
    if (this.since === null) return;
    const stalledMs = this.options.clock() - this.since;
    this.options.logger.warn(
      { stalledMs, attempts: this.attempts, lastCode: this.lastCode },
      `outcomes are durable again after ${Math.round(stalledMs / 1000)} s; the crawl goes on`,
    );
    this.since = null;
    this.attempts = 0;
    this.lastCode = null;
    this.lastLoggedAt = 0;
  }
}
