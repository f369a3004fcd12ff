import type { Logger } from '../../logger.js';

/** Where a run's rows are kept: the RabbitMQ frontier's ledger, or the SQLite frontier's tasks. */
export interface SweptRows {
  /** Deletes up to `limit` rows of a run that may go, in one durable write; how many (0: none left). */
  sweepRows(runId: string, limit: number): number;
  /** Gives up to `maxPages` free pages back to the file system; how many (0 where it cannot). */
  releaseFreePages(maxPages: number): number;
}

export interface RunSweeperOptions {
  rows: SweptRows;
  /**
   * Whether this process still holds deliveries or leases of the run: their outcomes are settled
   * against its rows, so the run waits until none is left.
   */
  holds: (runId: string) => boolean;
  logger: Logger;
  /** Rows deleted per write (default 2,000). */
  sliceRows?: number;
  /** Free pages given back to the file system per write, once a run is swept (default 1,024: 4 MiB). */
  slicePages?: number;
  /** Pause between two writes (default 20 ms), so the frontier's own writes go between them. */
  pauseMs?: number;
  /** How often runs still held are looked at again (default 1 s). */
  heldRetryMs?: number;
}

/**
 * Deletes the rows of runs that are over (retired: in the RabbitMQ frontier's ledger once their
 * queues are deleted too, in the SQLite frontier's tasks) a slice per write, in the background: a
 * scheduler that serves a run a day would otherwise keep every URL of every run it ever served on
 * disk. Then it gives the freed pages back to the file system where the file allows it, a slice per
 * write too (elsewhere SQLite reuses them). A failed write is logged and its run left for the next
 * start (the frontier lists it again).
 */
export class RunSweeper {
  private readonly queue = new Set<string>();
  private running: Promise<void> | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  private readonly sliceRows: number;
  private readonly slicePages: number;
  private readonly pauseMs: number;
  private readonly heldRetryMs: number;

  constructor(private readonly options: RunSweeperOptions) {
    this.sliceRows = options.sliceRows ?? 2_000;
    this.slicePages = options.slicePages ?? 1_024;
    this.pauseMs = options.pauseMs ?? 20;
    this.heldRetryMs = options.heldRetryMs ?? 1_000;
  }

  /** Sweeps the run's URL rows, once this process holds none of its deliveries. */
  add(runId: string): void {
    if (this.closed) return;
    this.queue.add(runId);
    this.kick();
  }

  /** Stops after the write in progress; what is left is swept at the next start. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.running;
  }

  private kick(): void {
    if (this.running !== null) return;
    this.running = this.loop().finally(() => {
      this.running = null;
      // A run added while the loop was ending.
      if (this.queue.size > 0 && !this.closed) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.queue.size > 0 && !this.closed) {
      let swept = false;
      for (const runId of [...this.queue]) {
        if (this.closed) return;
        if (this.options.holds(runId)) continue;
        await this.sweep(runId);
        swept = true;
      }
      if (!swept) await this.pause(this.heldRetryMs);
    }
  }

  private async sweep(runId: string): Promise<void> {
    const { rows: store, logger } = this.options;
    let rows = 0;
    let pages = 0;
    try {
      for (;;) {
        const deleted = store.sweepRows(runId, this.sliceRows);
        rows += deleted;
        if (deleted < this.sliceRows) break;
        await this.pause(this.pauseMs);
        if (this.closed) return;
      }
      for (;;) {
        const released = store.releaseFreePages(this.slicePages);
        pages += released;
        if (released < this.slicePages) break;
        await this.pause(this.pauseMs);
        if (this.closed) return;
      }
      if (rows > 0) {
        logger.info({ runId, rows, pagesReleased: pages }, "a finished run's URL rows are deleted");
      }
    } catch (err) {
      logger.warn(
        { err, runId, rows, pagesReleased: pages },
        "could not delete a finished run's URL rows or give their space back; tried at the next start or sweep",
      );
    }
    this.queue.delete(runId);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}
