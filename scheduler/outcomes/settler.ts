import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { Frontier, SettleResult } from '../../shared/ports/frontier.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import type { SeenCache } from './seen-cache.js';
import { unfetchedRecord } from './unfetched-record.js';

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

/** The smallest valid page record saying a URL's record could not be stored. */
function unwritableRecord(url: string, err: AppError): SinkRecord {
  const error = { code: 'RECORD_UNWRITABLE', message: `${err.code}: ${err.message}` };
  return unfetchedRecord({ url, depth: 0, parentUrl: null, attempt: 1 }, error, Date.now());
}

interface Batch {
  records: SinkRecord[];
  /** Whose record each one is, aligned with `records`. */
  owners: LeaseRef[];
  acks: { lease: LeaseRef; discovered: NewTask[] }[];
  retries: { lease: LeaseRef; delayMs: number; error: string }[];
  failures: { lease: LeaseRef; error: string }[];
}

export interface SettlerOptions {
  sink: PageSink;
  frontier: Frontier;
  logger: Logger;
  /** Cap on URLs ever accepted (0: none); read at each commit, as a crawl's settings can change. */
  maxTotal: number | (() => number);
  /** URLs known to be in the frontier: discovered links found here are not sent again. */
  seen?: SeenCache;
  onSettled: (result: SettleResult, batch: { acks: number; retries: number; failures: number }) => void;
}

const emptyBatch = (): Batch => ({ records: [], owners: [], acks: [], retries: [], failures: [] });

/**
 * Ack after durability, with group commit: outcomes collect while the previous batch is being
 * made durable; then the batch's records go to the page sink, and only once the sink confirms do
 * the acks, retries, failures and discovered URLs go to the frontier, in one step, with the sink's
 * checkpoint. A failure keeps the batch and tries again: nothing is acked that is not durable.
 */
export class Settler {
  private pending = emptyBatch();
  private committing: Batch | null = null;
  private running: Promise<void> | null = null;
  private backoffMs = 0;
  private closed = false;

  constructor(private readonly options: SettlerOptions) {}

  private maxTotal(): number {
    const { maxTotal } = this.options;
    return typeof maxTotal === 'function' ? maxTotal() : maxTotal;
  }

  /** Leases whose outcome is on its way to durability: still held, so still to be renewed. */
  heldLeases(): LeaseRef[] {
    const leases: LeaseRef[] = [];
    for (const batch of [this.pending, this.committing]) {
      if (!batch) continue;
      for (const item of [...batch.acks, ...batch.retries, ...batch.failures]) leases.push(item.lease);
    }
    return leases;
  }

  /** Outcomes waiting to be made durable (for backpressure). */
  get backlog(): number {
    return this.pending.acks.length + this.pending.retries.length + this.pending.failures.length;
  }

  ack(lease: LeaseRef, record: SinkRecord, discovered: NewTask[]): void {
    this.pending.records.push(record);
    this.pending.owners.push(lease);
    this.pending.acks.push({ lease, discovered: this.unseen(discovered) });
    this.kick();
  }

  /** Settle a lease whose record is already durable (found by recovery after a crash). */
  ackRecovered(lease: LeaseRef, discovered: NewTask[]): void {
    this.pending.acks.push({ lease, discovered: this.unseen(discovered) });
    this.kick();
  }

  private unseen(discovered: NewTask[]): NewTask[] {
    const seen = this.options.seen;
    return seen ? discovered.filter((task) => !seen.has(task.url)) : discovered;
  }

  fail(lease: LeaseRef, record: SinkRecord, error: string): void {
    this.pending.records.push(record);
    this.pending.owners.push(lease);
    this.pending.failures.push({ lease, error });
    this.kick();
  }

  failRecovered(lease: LeaseRef, error: string): void {
    this.pending.failures.push({ lease, error });
    this.kick();
  }

  retry(lease: LeaseRef, delayMs: number, error: string): void {
    this.pending.retries.push({ lease, delayMs, error });
    this.kick();
  }

  private kick(): void {
    if (this.running || this.closed) return;
    this.running = new Promise((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.backlog > 0 || this.pending.records.length > 0) {
        const batch = this.pending;
        this.pending = emptyBatch();
        this.committing = batch;
        await this.commit(batch);
        this.committing = null;
      }
    } finally {
      this.running = null;
    }
  }

  /**
   * Drops outcomes whose lease died meanwhile (a broker connection went away): the frontier hands
   * their tasks out again by itself and would ignore their settlement, so writing their records now
   * would only put duplicates in the sink.
   */
  private pruneDead(batch: Batch): void {
    const live = this.options.frontier.isLeaseLive?.bind(this.options.frontier);
    if (!live) return;
    const dead = new Set<string>();
    const keep = <T extends { lease: LeaseRef }>(items: T[]): T[] =>
      items.filter((item) => {
        if (live(item.lease)) return true;
        // By lease, not task: two copies of one task (a redelivery) can share a batch, one dead.
        dead.add(item.lease.leaseId);
        return false;
      });
    batch.acks = keep(batch.acks);
    batch.retries = keep(batch.retries);
    batch.failures = keep(batch.failures);
    if (dead.size === 0) return;
    const records: SinkRecord[] = [];
    const owners: LeaseRef[] = [];
    for (const [i, owner] of batch.owners.entries()) {
      if (dead.has(owner.leaseId)) continue;
      owners.push(owner);
      records.push(batch.records[i] as SinkRecord);
    }
    batch.records = records;
    batch.owners = owners;
    this.options.logger.info(
      { dropped: dead.size },
      'outcomes of lost leases dropped; their tasks come back',
    );
  }

  private async commit(batch: Batch): Promise<void> {
    let written: { checkpoint: string | null } | null = null;
    for (;;) {
      try {
        // Once the sink confirmed the records, a retry only repeats the settle: no duplicate writes.
        if (written === null) this.pruneDead(batch);
        written ??= { checkpoint: await this.writeRecords(batch) };
        const checkpoint = written.checkpoint;
        const result = await this.options.frontier.settle({
          acks: batch.acks,
          retries: batch.retries,
          failures: batch.failures,
          maxTotal: this.maxTotal() > 0 ? this.maxTotal() : undefined,
          ...(checkpoint === null ? {} : { checkpoint }),
        });
        this.backoffMs = 0;
        // Remember discovered URLs only when every settlement applied: a stale ack pushes none of its
        // links, and caching them would hide them for good when its page is fetched again.
        const seen = this.options.seen;
        const settled = batch.acks.length + batch.retries.length + batch.failures.length;
        if (seen && result.applied === settled) {
          for (const ack of batch.acks) for (const task of ack.discovered) seen.add(task.url);
        }
        this.options.onSettled(result, {
          acks: batch.acks.length,
          retries: batch.retries.length,
          failures: batch.failures.length,
        });
        return;
      } catch (err) {
        if (this.closed) throw err;
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), 10_000);
        this.options.logger.error(
          { err, records: batch.records.length, retryInMs: this.backoffMs },
          'could not make a batch durable; keeping it and trying again',
        );
        await new Promise((resolve) => setTimeout(resolve, this.backoffMs));
      }
    }
  }

  /**
   * Writes the batch's records. A sink that refuses a record for good (too large for Kafka, say)
   * fails only that record: the batch is written record by record, and a refused one is replaced by
   * a small failure record so its URL still ends with an outcome, and it is settled as failed.
   */
  private async writeRecords(batch: Batch): Promise<string | null> {
    try {
      return await this.options.sink.write(batch.records);
    } catch (err) {
      if (!(err instanceof AppError) || err.retriable) throw err;
      this.options.logger.warn({ err }, 'the sink refused a batch for good; writing its records one by one');
    }
    let checkpoint: string | null = null;
    for (const [i, record] of batch.records.entries()) {
      try {
        checkpoint = await this.options.sink.write([record]);
      } catch (err) {
        if (!(err instanceof AppError) || err.retriable) throw err;
        const owner = batch.owners[i] as LeaseRef;
        const reason = `${err.code}: ${err.message}`;
        this.options.logger.error(
          { url: record.key, code: err.code },
          'record refused by the sink; recording a failure',
        );
        batch.records[i] = unwritableRecord(record.key, err);
        checkpoint = await this.options.sink.write([batch.records[i] as SinkRecord]);
        const ackIndex = batch.acks.findIndex((a) => a.lease.leaseId === owner.leaseId);
        if (ackIndex >= 0) batch.acks.splice(ackIndex, 1);
        if (!batch.failures.some((f) => f.lease.leaseId === owner.leaseId)) {
          batch.failures.push({ lease: owner, error: reason });
        }
      }
    }
    return checkpoint;
  }

  /** Wait until everything submitted so far is settled. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }
}
