import type { Logger } from '../../shared/logger.js';
import type { LogRepository, LogRow } from '../../shared/ports/sql-store.js';

export interface FailureLogOptions {
  logs: Pick<LogRepository, 'append'>;
  logger: Logger;
  /** Rows held at most while SQL is slow or down; past it the oldest are dropped (and counted). */
  maxRows?: number;
  /** Rows per append (one transaction). */
  batchRows?: number;
  /** How long a row waits for others before its batch goes. */
  flushMs?: number;
}

/**
 * The SQL failure log of the scheduler: retries and final failures are handed over with `add`,
 * which never waits, and written in batches, one transaction each. The log is for people: while
 * SQL is down rows wait (bounded; the oldest are dropped beyond `maxRows`, which is logged), and
 * the crawl never waits for it. The page sink and the frontier stay the record of every outcome.
 */
export class FailureLog {
  private rows: LogRow[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private closed = false;
  /** The last write failed: try again less often (and say so less often). */
  private failing = false;
  private readonly maxRows: number;
  private readonly batchRows: number;
  private readonly flushMs: number;

  constructor(private readonly options: FailureLogOptions) {
    this.maxRows = options.maxRows ?? 10_000;
    this.batchRows = options.batchRows ?? 500;
    this.flushMs = options.flushMs ?? 500;
  }

  add(row: LogRow): void {
    if (this.closed) return;
    this.rows.push(row);
    if (this.rows.length > this.maxRows) {
      this.rows.shift();
      this.dropped += 1;
    }
    this.timer ??= setTimeout(() => void this.flush(), this.rows.length >= this.batchRows ? 0 : this.flushMs);
  }

  /** Writes what is held; resolves when SQL took it or failed (then it waits for the next flush). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.writing ??= this.write().finally(() => {
      this.writing = null;
      const wait = this.failing ? 5_000 : this.flushMs;
      if (this.rows.length > 0 && !this.closed) this.timer ??= setTimeout(() => void this.flush(), wait);
    });
    return this.writing;
  }

  private async write(): Promise<void> {
    if (this.dropped > 0) {
      this.options.logger.warn(
        { dropped: this.dropped },
        'failure log rows dropped while SQL was unavailable',
      );
      this.dropped = 0;
    }
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, this.batchRows);
      try {
        await this.options.logs.append(batch);
      } catch (err) {
        this.rows.unshift(...batch);
        if (!this.failing)
          this.options.logger.warn({ err, rows: this.rows.length }, 'failure log not written; trying again');
        this.failing = true;
        return;
      }
      this.failing = false;
    }
  }

  /** Writes what is held (one try), then takes no more; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
