import type { Logger } from '../../shared/logger.js';
import type { Frontier, RunLimit, SettleResult } from '../../shared/ports/frontier.js';
import { isRecordRefused, type PageSink, type SinkRecord } from '../../shared/ports/page-sink.js';
import type { LogRow } from '../../shared/ports/sql-store.js';
import type { NewTask } from '../../shared/protocol/task.js';
import {
  batchCounts,
  outcomeBytes,
  takeBatch,
  toSettlement,
  type Batch,
  type BatchCounts,
  type LeaseRef,
  type Outcome,
  type SettledLease,
} from './outcome-batch.js';
import type { SeenCache } from './seen-cache.js';
import type { CaptureUpdate } from '../recrawl/validators-index.js';
import { SETTLER_DEFAULTS, type SettlerLimits } from './settler-limits.js';
import { StallReport } from './stall-report.js';
import { unwritableRecord } from './unfetched-record.js';
import type { SchedulerMetrics } from '../metrics/scheduler-metrics.js';

export interface SettlerOptions extends Partial<SettlerLimits> {
  sink: PageSink;
  frontier: Frontier;
  logger: Logger;
  /**
   * Cap on URLs a run ever accepts (0 or undefined: none): one number for every run, or asked per
   * run at each commit, as a run's settings can change.
   */
  maxTotal: number | RunLimit;
  /** URLs known to be in the frontier: discovered links found here are not sent again. */
  seen?: SeenCache;
  onSettled: (result: SettleResult, batch: BatchCounts) => void;
  /**
   * Each retry and final failure once it is settled, for the run's failure log in SQL. Called on
   * the settler's path: it must only hand the row on (a batched writer), never wait for it.
   */
  onFailure?: (row: LogRow) => void;
  /**
   * The recrawl index (scheduler/recrawl): each settled batch's captures, in one synchronous write
   * after the settle. A failure there is logged, never stalls the crawl: a URL it misses is
   * fetched in full by the next run.
   */
  captures?: { record(updates: readonly CaptureUpdate[]): void };
  clock?: () => number;
  /** Counts retries by tier, final failures and errors by code as they are handed in. */
  metrics?: Pick<SchedulerMetrics, 'retry' | 'finalFailure'>;
}

const MAX_BACKOFF_MS = 10_000;

/**
 * Ack after durability, with group commit: outcomes collect while the previous batch is being
 * made durable; then the oldest of them (up to `maxBatchBytes` of records) go to the page sink,
 * and only once the sink confirms do their acks, retries, failures and discovered URLs go to the
 * frontier, in one step, with the sink's checkpoint. A failure of the sink or the frontier keeps
 * the batch and tries again with backoff, reported once per interval: nothing is acked that is
 * not durable, and while it lasts `accepting` turns false once the backlog reaches its bounds, in
 * count or in bytes, so the scheduler stops dispatching and memory stays bounded.
 */
export class Settler {
  private pending: Outcome[] = [];
  private pendingBytes = 0;
  private committing: Batch | null = null;
  /** When the batch being committed was taken (clock ms); null while none is. */
  private committingSince: number | null = null;
  private running: Promise<void> | null = null;
  private backoffMs = 0;
  /** close() was called: a failing commit gets one more try, not a backoff loop. */
  private closing = false;
  private closed = false;
  private wakeBackoff: (() => void) | null = null;
  private readonly limits: SettlerLimits;
  private readonly clock: () => number;
  private readonly stalls: StallReport;

  constructor(private readonly options: SettlerOptions) {
    this.limits = {
      maxBacklog: options.maxBacklog ?? SETTLER_DEFAULTS.maxBacklog,
      maxBacklogBytes: options.maxBacklogBytes ?? SETTLER_DEFAULTS.maxBacklogBytes,
      maxBatchBytes: options.maxBatchBytes ?? SETTLER_DEFAULTS.maxBatchBytes,
      stallLogIntervalMs: options.stallLogIntervalMs ?? SETTLER_DEFAULTS.stallLogIntervalMs,
    };
    this.clock = options.clock ?? Date.now;
    this.stalls = new StallReport({
      logger: options.logger,
      clock: this.clock,
      intervalMs: this.limits.stallLogIntervalMs,
    });
  }

  private maxTotal(): RunLimit {
    const { maxTotal } = this.options;
    return typeof maxTotal === 'function' ? maxTotal : () => maxTotal;
  }

  /** Leases whose outcome is on its way to durability: still held, so still to be renewed. */
  heldLeases(): LeaseRef[] {
    const leases = this.pending.map((o) => o.lease);
    for (const o of this.committing?.outcomes ?? []) leases.push(o.lease);
    return leases;
  }

  /**
   * How long the batch of outcomes being made durable has been at it, ms (0 while none is): a few
   * milliseconds normally; it grows while the sink or the frontier fails (a store down, a full disk)
   * or waits (a broker's resource alarm), and nothing is acknowledged meanwhile.
   */
  commitWaitMs(): number {
    return this.committingSince === null ? 0 : Math.max(0, this.clock() - this.committingSince);
  }

  /**
   * Since when (clock ms) the batch being made durable has been at it, once that is `minMs` or
   * longer, and the code of its last failure (null: none failed, it is waiting); null otherwise.
   */
  stalled(minMs: number): { since: number; code: string | null } | null {
    const since = this.committingSince;
    if (since === null || this.clock() - since < minMs) return null;
    return { since, code: this.stalls.code };
  }

  /** Outcomes waiting for the next commit (the batch being committed is not counted). */
  get backlog(): number {
    return this.pending.length;
  }

  /** Bytes held by outcomes not yet settled, the batch being committed included. */
  get backlogBytes(): number {
    return this.pendingBytes + (this.committing?.bytes ?? 0);
  }

  /** False while the backlog is at its bound in count or in bytes: dispatch no new work. */
  get accepting(): boolean {
    return this.backlog < this.limits.maxBacklog && this.backlogBytes < this.limits.maxBacklogBytes;
  }

  /** `capture`: what the recrawl index learns of the page once this ack is settled. */
  ack(lease: SettledLease, record: SinkRecord, discovered: NewTask[], capture?: CaptureUpdate): void {
    this.add('ack', lease, record, this.unseen(discovered), '', 0, capture);
  }

  /** Settle a lease whose record is already durable (found by recovery after a crash). */
  ackRecovered(lease: SettledLease, discovered: NewTask[]): void {
    this.add('ack', lease, null, this.unseen(discovered));
  }

  fail(lease: SettledLease, record: SinkRecord, error: string): void {
    this.options.metrics?.finalFailure(error);
    this.add('fail', lease, record, [], error);
  }

  failRecovered(lease: SettledLease, error: string): void {
    this.add('fail', lease, null, [], error);
  }

  retry(lease: SettledLease, delayMs: number, error: string): void {
    this.options.metrics?.retry(delayMs, error);
    this.add('retry', lease, null, [], error, delayMs);
  }

  private add(
    kind: Outcome['kind'],
    lease: SettledLease,
    record: SinkRecord | null,
    discovered: NewTask[],
    error = '',
    delayMs = 0,
    capture?: CaptureUpdate,
  ): void {
    const bytes = outcomeBytes(record, discovered);
    this.pending.push({
      kind,
      lease,
      record,
      discovered,
      error,
      delayMs,
      bytes,
      ...(capture ? { capture } : {}),
    });
    this.pendingBytes += bytes;
    this.kick();
  }

  /**
   * The links of a page not known to be in its run already. Once a crawl is going, most links on
   * a page point at pages its run has, so asking the seen-cache before the run's scope and depth
   * rules spares those a URL parse each. (`ack` asks again for the tasks made of the others.)
   */
  unknownLinks(runId: string, links: readonly string[]): readonly string[] {
    const seen = this.options.seen;
    return seen ? links.filter((url) => !seen.has(runId, url)) : links;
  }

  private unseen(discovered: NewTask[]): NewTask[] {
    const seen = this.options.seen;
    return seen ? discovered.filter((task) => !seen.has(task.runId, task.url)) : discovered;
  }

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = new Promise((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = takeBatch(this.pending, this.limits.maxBatchBytes);
        this.pendingBytes -= batch.bytes;
        this.committing = batch;
        this.committingSince = this.clock();
        const committed = await this.commit(batch);
        this.committing = null;
        this.committingSince = null;
        if (!committed) {
          await this.abandon(batch);
          return;
        }
      }
    } finally {
      this.committingSince = null;
      this.running = null;
    }
  }

  /**
   * Shutting down while outcomes cannot be made durable: they are given up, unacknowledged, so
   * close() ends. Their leases are handed back (or, if the frontier cannot take even that, expire)
   * and the tasks are fetched again: a shutdown during a stall costs time, never URLs.
   */
  private async abandon(batch: Batch): Promise<void> {
    const leases = [...batch.outcomes, ...this.pending].map((o) => o.lease);
    this.pending = [];
    this.pendingBytes = 0;
    this.options.logger.warn(
      { outcomes: leases.length },
      'shutting down while outcomes cannot be made durable; they are not acknowledged and their tasks will be fetched again',
    );
    try {
      await this.options.frontier.release(leases);
    } catch (err) {
      this.options.logger.warn({ err }, 'could not hand the leases back; they expire instead');
    }
  }

  /**
   * Drops outcomes whose lease died meanwhile (a broker connection went away): the frontier hands
   * their tasks out again by itself and would ignore their settlement, so writing their records now
   * would only put duplicates in the sink. By lease, not task: two copies of one task (a
   * redelivery) can share a batch, one dead.
   */
  private pruneDead(batch: Batch): void {
    const live = this.options.frontier.isLeaseLive?.bind(this.options.frontier);
    if (!live) return;
    const before = batch.outcomes.length;
    batch.outcomes = batch.outcomes.filter((o) => live(o.lease));
    const dropped = before - batch.outcomes.length;
    if (dropped === 0) return;
    this.options.logger.info({ dropped }, 'outcomes of lost leases dropped; their tasks come back');
  }

  /** True once the batch is durable and settled; false when given up at shutdown. */
  private async commit(batch: Batch): Promise<boolean> {
    let written: { checkpoint: string | null } | null = null;
    for (;;) {
      try {
        // Once the sink confirmed the records, a retry only repeats the settle: no duplicate writes.
        if (written === null && batch.recordsWritten === 0) this.pruneDead(batch);
        written ??= { checkpoint: await this.writeRecords(batch) };
        const result = await this.options.frontier.settle(
          toSettlement(batch, written.checkpoint, this.maxTotal()),
        );
        this.backoffMs = 0;
        this.stalls.recovered();
        this.remember(batch, result);
        this.recordCaptures(batch);
        this.logFailures(batch);
        this.options.onSettled(result, batchCounts(batch));
        return true;
      } catch (err) {
        if (this.closing) {
          this.options.logger.error({ err }, 'a batch could not be made durable during shutdown');
          return false;
        }
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), MAX_BACKOFF_MS);
        this.stalls.failed(err, {
          step: written === null ? 'page sink' : 'frontier',
          outcomes: batch.outcomes.length,
          backlog: this.backlog,
          backlogBytes: this.backlogBytes,
          retryInMs: this.backoffMs,
        });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.backoffMs);
          this.wakeBackoff = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeBackoff = null;
      }
    }
  }

  /** The batch's captures to the recrawl index (see SettlerOptions.captures). */
  private recordCaptures(batch: Batch): void {
    const index = this.options.captures;
    if (!index) return;
    const updates: CaptureUpdate[] = [];
    for (const o of batch.outcomes) if (o.kind === 'ack' && o.capture) updates.push(o.capture);
    try {
      index.record(updates);
    } catch (err) {
      this.options.logger.warn(
        { err, captures: updates.length },
        'could not update the recrawl index; the next run fetches these pages in full',
      );
    }
  }

  /** Hands the batch's retries and final failures to the failure log (see SettlerOptions.onFailure). */
  private logFailures(batch: Batch): void {
    const log = this.options.onFailure;
    if (!log) return;
    const at = this.clock();
    for (const o of batch.outcomes) {
      if (o.kind === 'ack') continue;
      const { runId, url, attempt } = o.lease;
      try {
        log({
          runId,
          url,
          code: errorCodeOf(o.error),
          attempts: attempt,
          lastError: o.error,
          final: o.kind === 'fail',
          at,
        });
      } catch (err) {
        this.options.logger.warn({ err, url }, 'could not log a failure');
      }
    }
  }

  /**
   * Remembers the discovered URLs only when every settlement applied and none was refused at the
   * page cap: a stale ack pushes none of its links, and a URL refused at the cap is not in the
   * frontier; caching either would hide it for good (when the page is fetched again, or when the
   * crawl is given a higher cap).
   */
  private remember(batch: Batch, result: SettleResult): void {
    const seen = this.options.seen;
    if (!seen || result.applied !== batch.outcomes.length || result.capped === true) return;
    for (const o of batch.outcomes) for (const task of o.discovered) seen.add(task.runId, task.url);
  }

  /**
   * Writes the batch's records. A sink that refuses a record for good (too large for Kafka even
   * after the claim check) fails only that record: the batch is written record by record, and a
   * refused one is replaced by a small failure record so its URL still ends with an outcome; it is
   * settled as failed, and the URLs its page discovered are still pushed. Any other failure (the
   * sink or its blob store down, full, or refusing our credentials) is thrown: the batch waits.
   */
  private async writeRecords(batch: Batch): Promise<string | null> {
    const withRecords = batch.outcomes.filter((o) => o.record !== null);
    if (!batch.oneByOne) {
      try {
        return await this.options.sink.write(withRecords.map((o) => o.record as SinkRecord));
      } catch (err) {
        if (!isRecordRefused(err)) throw err;
        this.options.logger.warn(
          { err },
          'the sink refused a batch for good; writing its records one by one',
        );
        batch.oneByOne = true;
      }
    }
    for (let i = batch.recordsWritten; i < withRecords.length; i++) {
      const outcome = withRecords[i] as Outcome;
      const record = outcome.record as SinkRecord;
      try {
        batch.checkpoint = await this.options.sink.write([record]);
      } catch (err) {
        if (!isRecordRefused(err)) throw err;
        this.options.logger.error(
          {
            url: record.key,
            code: err.code,
            bytes: record.value.length,
            discovered: outcome.discovered.length,
          },
          'record refused by the sink; recording a failure (the URLs it discovered are still queued)',
        );
        outcome.record = unwritableRecord(record, err, this.clock());
        batch.checkpoint = await this.options.sink.write([outcome.record]);
        if (outcome.kind === 'ack') {
          outcome.kind = 'fail';
          outcome.error = `${err.code}: ${err.message}`;
        }
      }
      batch.recordsWritten = i + 1;
    }
    return batch.checkpoint;
  }

  /** Wait until everything submitted so far is settled. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Waits for what was submitted to settle, then takes no more. During a stall, the failing batch
   * is tried once more at once (its backoff is cut short) and, if that fails too, given up with
   * everything still waiting (see abandon): close never waits for a disk or a store that may not
   * come back.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.wakeBackoff?.();
    await this.flush();
    this.closed = true;
  }
}

/** Outcome errors read `CODE: message` (the catalogue's code first); anything else is UNKNOWN. */
export function errorCodeOf(error: string): string {
  return /^([A-Z][A-Z0-9_]*):/.exec(error)?.[1] ?? 'UNKNOWN';
}
