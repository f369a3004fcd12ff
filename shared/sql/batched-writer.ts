import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';

/**
 * Rows on their way to SQL from a hot path (the scheduler's retries and final failures): `add()`
 * never waits and never throws; rows go out in batches, one `write` (one transaction) per batch,
 * when a batch is full or `intervalMs` after the first row waiting, whichever comes first.
 *
 * While the database is down, the batch is kept and retried with a doubling backoff. Memory is
 * bounded by `maxRows` and `maxBytes` (rows waiting plus the batch being written): past the bound
 * the oldest waiting rows are dropped, counted, and logged at most once per
 * `dropLogIntervalMs`. That is the right trade for what goes through here: the SQL log is derived
 * (the page sink holds every failure record durably), and a crawl must never stall on it.
 *
 * A write that fails for good (a non-retriable AppError, or anything that is not an AppError: a
 * bug) is retried row by row, so that one bad row costs only itself; such rows are `rejected`.
 */
export interface BatchedWriterOptions<T> {
  /** For logs: what the rows are (`sql log`). */
  name: string;
  /** Writes one batch in one transaction (e.g. `rows => store.logs.append(rows)`). */
  write: (rows: readonly T[]) => Promise<void>;
  /** Approximate bytes a row holds in memory (default: its JSON length). */
  sizeOf?: (row: T) => number;
  /** Rows a batch takes at most, and the count that starts a write at once (default 500). */
  batchRows?: number;
  /** Longest a row waits before its batch is written (default 250 ms). */
  intervalMs?: number;
  /** Bound on rows held (default 20 000) and their bytes (default 16 MiB). */
  maxRows?: number;
  maxBytes?: number;
  /** Backoff between attempts while the database is down (default 250 ms doubling to 10 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** At most one log line per this many ms for drops and for failing writes (default 10 s). */
  logIntervalMs?: number;
  logger?: Logger;
  now?: () => number;
}

export interface BatchedWriterStats {
  /** Rows waiting, and the batch being written. */
  pending: number;
  pendingBytes: number;
  written: number;
  /** Dropped to stay in bounds, added after close(), or still waiting when close() gave up. */
  dropped: number;
  /** Refused by the database for good (row by row). */
  rejected: number;
  /** Writes that failed and were retried. */
  failedAttempts: number;
}

interface Entry<T> {
  row: T;
  bytes: number;
}

/** close()'s deadline runs on real time (`now` is for the log rate limit, which tests drive). */
const clock = (): number => performance.now();

const defaultSize = (row: unknown): number => JSON.stringify(row)?.length ?? 16;

export class BatchedWriter<T> {
  private readonly o: Required<Omit<BatchedWriterOptions<T>, 'logger' | 'now' | 'sizeOf'>>;
  private readonly sizeOf: (row: T) => number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private queue: Entry<T>[] = [];
  private head = 0;
  private queuedBytes = 0;
  private inFlight: Entry<T>[] = [];
  private inFlightBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private pumping: Promise<void> | null = null;
  private closing = false;
  private deadlineAt = Infinity;
  private wake: (() => void) | null = null;
  private readonly counts = { written: 0, dropped: 0, rejected: 0, failedAttempts: 0 };
  private unloggedDrops = 0;
  private lastDropLog = -Infinity;
  private lastFailureLog = -Infinity;

  constructor(options: BatchedWriterOptions<T>) {
    this.o = {
      name: options.name,
      write: options.write,
      batchRows: Math.max(1, options.batchRows ?? 500),
      intervalMs: Math.max(0, options.intervalMs ?? 250),
      maxRows: Math.max(1, options.maxRows ?? 20_000),
      maxBytes: Math.max(1, options.maxBytes ?? 16 * 1024 * 1024),
      retryMinMs: Math.max(1, options.retryMinMs ?? 250),
      retryMaxMs: Math.max(1, options.retryMaxMs ?? 10_000),
      logIntervalMs: Math.max(0, options.logIntervalMs ?? 10_000),
    };
    this.sizeOf = options.sizeOf ?? defaultSize;
    this.logger = (options.logger ?? silentLogger()).child({ module: 'batched-writer', rows: options.name });
    this.now = options.now ?? Date.now;
  }

  /** Hands a row over; returns at once. After close() the row is dropped (and counted). */
  add(row: T): void {
    if (this.closing) {
      this.drop(1);
      return;
    }
    const bytes = this.sizeOf(row);
    this.queue.push({ row, bytes });
    this.queuedBytes += bytes;
    this.enforceBound();
    this.schedule();
  }

  stats(): BatchedWriterStats {
    return {
      pending: this.waiting() + this.inFlight.length,
      pendingBytes: this.queuedBytes + this.inFlightBytes,
      ...this.counts,
    };
  }

  /**
   * Writes what is waiting, retrying while the database is down, until everything is written or
   * `deadlineMs` passes; what is still waiting then is dropped (and counted). Safe to call twice.
   */
  async close(deadlineMs = 5_000): Promise<BatchedWriterStats> {
    if (!this.closing) {
      this.closing = true;
      this.deadlineAt = clock() + deadlineMs;
      // A batch sleeping out its backoff tries once more now: the database may be back.
      this.wake?.();
    }
    this.clearTimer();
    // Ref'd, unlike the writer's other timers: the process stays up until the deadline.
    let deadlineTimer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = setTimeout(resolve, Math.max(0, this.deadlineAt - clock()));
    });
    this.kick();
    await Promise.race([this.idle(), deadline]);
    clearTimeout(deadlineTimer);
    this.wake?.();
    const left = this.waiting();
    if (left > 0) {
      this.takeWaiting(left);
      this.drop(left);
    }
    this.logDrops(true);
    return this.stats();
  }

  private async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  private waiting(): number {
    return this.queue.length - this.head;
  }

  private schedule(): void {
    if (this.pumping || this.waiting() === 0) return;
    if (this.closing || this.waiting() >= this.o.batchRows) {
      this.kick();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.kick();
    }, this.o.intervalMs).unref();
  }

  private kick(): void {
    if (this.pumping || this.waiting() === 0 || this.pastDeadline()) return;
    this.clearTimer();
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      this.schedule();
    });
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async pump(): Promise<void> {
    let backoff = this.o.retryMinMs;
    while (this.waiting() > 0) {
      if (this.pastDeadline()) return;
      const batch = this.takeWaiting(Math.min(this.o.batchRows, this.waiting()));
      this.inFlight = batch;
      this.inFlightBytes = batch.reduce((sum, e) => sum + e.bytes, 0);
      let retry = false;
      try {
        await this.o.write(batch.map((e) => e.row));
        this.counts.written += batch.length;
        backoff = this.o.retryMinMs;
      } catch (err) {
        if (err instanceof AppError && err.retriable) {
          retry = true;
          this.counts.failedAttempts += 1;
          this.logFailure(err, batch.length, backoff);
        } else {
          await this.writeOneByOne(batch, err);
        }
      } finally {
        this.inFlight = [];
        this.inFlightBytes = 0;
      }
      if (retry) {
        if (this.pastDeadline()) {
          this.drop(batch.length);
          return;
        }
        // Back at the head, oldest first; the bound may now drop some of them.
        this.queue.splice(this.head, 0, ...batch);
        this.queuedBytes += batch.reduce((sum, e) => sum + e.bytes, 0);
        this.enforceBound();
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, this.o.retryMaxMs);
        continue;
      }
      // A part batch waits for its interval unless closing.
      if (!this.closing && this.waiting() < this.o.batchRows) return;
    }
  }

  private async writeOneByOne(batch: Entry<T>[], first: unknown): Promise<void> {
    if (batch.length === 1) {
      this.reject(1, first);
      return;
    }
    for (const entry of batch) {
      try {
        await this.o.write([entry.row]);
        this.counts.written += 1;
      } catch (err) {
        // Even a retriable error is not retried here: the batch was already refused for good.
        this.reject(1, err);
      }
    }
  }

  private reject(n: number, err: unknown): void {
    this.counts.rejected += n;
    this.logger.error(
      { err, rejected: this.counts.rejected },
      `${this.o.name}: the database refused a row for good; it is not written`,
    );
  }

  private takeWaiting(n: number): Entry<T>[] {
    const taken = this.queue.slice(this.head, this.head + n);
    this.head += taken.length;
    this.queuedBytes -= taken.reduce((sum, e) => sum + e.bytes, 0);
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return taken;
  }

  private enforceBound(): void {
    let dropped = 0;
    while (
      this.waiting() > 0 &&
      (this.waiting() + this.inFlight.length > this.o.maxRows ||
        this.queuedBytes + this.inFlightBytes > this.o.maxBytes)
    ) {
      this.takeWaiting(1);
      dropped += 1;
    }
    if (dropped > 0) this.drop(dropped);
  }

  private drop(n: number): void {
    this.counts.dropped += n;
    this.unloggedDrops += n;
    this.logDrops(false);
  }

  private logDrops(force: boolean): void {
    if (this.unloggedDrops === 0) return;
    const now = this.now();
    if (!force && now - this.lastDropLog < this.o.logIntervalMs) return;
    this.logger.warn(
      { dropped: this.unloggedDrops, droppedTotal: this.counts.dropped, pending: this.stats().pending },
      `${this.o.name}: rows dropped, oldest first, to stay within the memory bound (the database is slow or down)`,
    );
    this.unloggedDrops = 0;
    this.lastDropLog = now;
  }

  private logFailure(err: AppError, rows: number, retryInMs: number): void {
    const now = this.now();
    if (now - this.lastFailureLog < this.o.logIntervalMs) return;
    this.lastFailureLog = now;
    this.logger.warn(
      { err, rows, retryInMs, failedAttempts: this.counts.failedAttempts },
      `${this.o.name}: writing a batch failed; it is kept and retried`,
    );
  }

  private pastDeadline(): boolean {
    return this.closing && clock() >= this.deadlineAt;
  }

  private sleep(ms: number): Promise<void> {
    const wait = this.closing ? Math.min(ms, Math.max(0, this.deadlineAt - clock())) : ms;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      if (!this.closing) timer.unref();
      this.wake = done;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    }).then(() => {
      this.wake = null;
    });
  }
}
