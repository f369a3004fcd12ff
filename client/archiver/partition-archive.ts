import type { KafkaMessage } from 'kafkajs';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { BlobStore } from '../../shared/ports/blob-store.js';
import { ArchiveBatch, archivePrefix, parseArchiveName, type ArchivePlace } from './archive-batch.js';
import { archiveLine } from './archive-line.js';
import { retryUntilDone } from './retry.js';

export interface PartitionArchiveOptions extends ArchivePlace {
  maxRecords: number;
  maxBytes: number;
  maxAgeMs: number;
  blobStore: BlobStore;
  /** Commits `nextOffset` for this partition in the consumer group. */
  commit: (nextOffset: bigint) => Promise<void>;
  logger: Logger;
  now?: () => number;
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
}

/**
 * What became of an offered message. `taken` and `skipped` (already taken before a refetch) may be
 * resolved in Kafka; `busy` may not: fetching must pause until the batch in flight is stored, and
 * the message is fetched again.
 */
export type Offer = 'taken' | 'skipped' | 'busy';

export type FlushReason = 'records' | 'bytes' | 'age' | 'aligned' | 'rebalance' | 'shutdown';

/**
 * One partition's batch on its way to an archive object. Messages are taken in offset order into
 * one batch; when the batch is full (records, bytes), old, or a rebalance or shutdown asks, it is
 * sealed, stored, and only then its offsets are committed. While a batch is being stored the
 * partition takes nothing (memory stays within one batch), and a store that fails is retried with
 * backoff until it works or the partition is given up.
 *
 * Names are deterministic (`<topic>-p<n>-<first>-<last>`), and before storing, the batch looks for
 * an object a previous run stored from the same first offset without committing (a crash between
 * put and commit): it cuts itself at that object's last offset, or waits to reach it, so the
 * re-archived records overwrite that object instead of landing in a second, overlapping one.
 */
export class PartitionArchive {
  private batch: ArchiveBatch | null = null;
  private flushing: Promise<void> | null = null;
  /** Highest offset taken into a batch: after a rebalance Kafka refetches from the commit. */
  private lastTaken = -1n;
  private highWatermark = 0n;
  /** A previous run's object ends here: the batch fills up to it before it is stored. */
  private alignTo: bigint | null = null;
  private pendingCommit: bigint | null = null;
  private resume: (() => void) | null = null;
  private stopped = false;
  private commitRun: Promise<void> | null = null;
  /** The last store failed for a reason retries cannot fix (a bug): drain does not loop on it. */
  private broken = false;
  private readonly abort = new AbortController();
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(private readonly options: PartitionArchiveOptions) {
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  get partition(): number {
    return this.options.partition;
  }

  /** Nothing held: no open batch, no batch being stored, no commit owed. */
  get idle(): boolean {
    return this.batch === null && this.flushing === null && this.pendingCommit === null;
  }

  /** The log end offset Kafka reported with the latest fetch. */
  noteHighWatermark(highWatermark: string): void {
    const hw = BigInt(highWatermark);
    if (hw > this.highWatermark) this.highWatermark = hw;
  }

  offer(message: KafkaMessage): Offer {
    const offset = BigInt(message.offset);
    if (offset <= this.lastTaken) return 'skipped';
    if (this.flushing || this.stopped || this.abort.signal.aborted) return 'busy';
    if (this.batch && this.alignTo !== null && offset > this.alignTo) {
      // The previous object's last record is gone (compaction): store what there is.
      this.seal('aligned');
      return 'busy';
    }
    const line = archiveLine(this.options.topic, this.options.partition, message);
    if (this.batch && this.batch.bytes + line.bytes.length > this.options.maxBytes) {
      this.seal('bytes');
      return 'busy';
    }
    this.batch ??= new ArchiveBatch(this.now());
    this.batch.add(line);
    this.lastTaken = offset;
    if (this.batch.count >= this.options.maxRecords) this.seal('records');
    else if (this.batch.bytes >= this.options.maxBytes) this.seal('bytes');
    else if (offset === this.alignTo) this.seal('aligned');
    return 'taken';
  }

  /**
   * After a `busy` offer: `pause()` pauses fetching and returns what resumes it. Paused again each
   * time (a consumer restarted by kafkajs has forgotten the pause); the latest resume is kept.
   */
  pauseFetching(pause: () => () => void): void {
    this.resume = pause();
  }

  /** Runs the age limit and retries a commit that failed. */
  tick(): void {
    const batch = this.batch;
    if (batch && !this.flushing && this.now() - batch.startedAt >= this.options.maxAgeMs) {
      // While filling up to a previous object, age waits until Kafka has nothing more to give.
      if (this.alignTo === null || this.caughtUp()) this.seal('age');
    }
    if (!this.flushing && this.pendingCommit !== null) void this.commitPending();
  }

  /** Stores the open batch now (a rebalance is coming). */
  flushNow(reason: FlushReason): void {
    this.seal(reason);
  }

  /** Shutdown: takes nothing more, stores what it holds, commits. Resolves when done or given up. */
  async drain(): Promise<void> {
    this.stopped = true;
    for (;;) {
      if (this.flushing) await this.flushing;
      else if (this.batch && !this.abort.signal.aborted && !this.broken) this.seal('shutdown');
      else break;
    }
    // A commit from a tick may be running: wait for it, then commit what is still owed.
    await this.commitPending();
    await this.commitPending();
  }

  /**
   * The partition went to another member (or shutdown ran out of time): drop the open batch, stop
   * retrying, commit nothing more. A store already in progress may still land; the new owner
   * reads these records again from the last commit.
   */
  abandon(reason: string): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort(new Error(reason));
    if (this.batch) this.logger.info({ reason, records: this.batch.count }, 'batch given up');
    if (!this.flushing) this.batch = null;
    // kafkajs keeps a pause across rebalances: a partition that comes back must not stay paused.
    this.resumeFetching();
  }

  private caughtUp(): boolean {
    return this.lastTaken + 1n >= this.highWatermark;
  }

  private seal(reason: FlushReason): void {
    if (!this.batch || this.flushing) return;
    this.broken = false;
    this.flushing = this.flush(reason)
      .catch((err: unknown) => {
        if (this.abort.signal.aborted) this.logger.debug({ err: errorMessage(err) }, 'store abandoned');
        else {
          this.broken = true;
          this.logger.error({ err }, 'archive flush failed; the batch is kept uncommitted');
        }
      })
      .finally(() => {
        this.flushing = null;
        this.resumeFetching();
      });
  }

  private resumeFetching(): void {
    const resume = this.resume;
    if (!resume || this.stopped) return;
    this.resume = null;
    resume();
  }

  private async flush(reason: FlushReason): Promise<void> {
    while (this.batch) {
      const batch = this.batch;
      const previousEnd = await this.retry('list', () => this.previousObjectEnd(batch));
      if (previousEnd !== null && previousEnd > batch.last && reason === 'age' && !this.caughtUp()) {
        this.alignTo = previousEnd;
        this.logger.info(
          { first: String(batch.first), upTo: String(previousEnd) },
          'a previous run stored this batch further; filling up to it',
        );
        return;
      }
      const [head, tail] =
        previousEnd !== null && previousEnd < batch.last ? batch.splitAfter(previousEnd) : [batch, null];
      const key = head.key(this.options);
      const body = await head.encode();
      await this.retry('store', () =>
        this.options.blobStore.put(key, body, { contentType: 'application/gzip' }),
      );
      this.logger.debug({ key, reason, records: head.count, bytes: body.length }, 'archived');
      this.batch = tail;
      this.alignTo = null;
      this.pendingCommit = head.last + 1n;
      await this.commitPending();
    }
  }

  /** The last offset of an object a previous run stored from this batch's first offset, if any. */
  private async previousObjectEnd(batch: ArchiveBatch): Promise<bigint | null> {
    let end: bigint | null = null;
    for await (const key of this.options.blobStore.list(
      archivePrefix(this.options, batch.date, batch.first),
    )) {
      const parsed = parseArchiveName(key.slice(key.lastIndexOf('/') + 1));
      if (!parsed || parsed.first !== batch.first || parsed.partition !== this.options.partition) continue;
      if (end === null || parsed.last > end) end = parsed.last;
    }
    return end;
  }

  private retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return retryUntilDone(fn, {
      signal: this.abort.signal,
      initialDelayMs: this.options.retryInitialDelayMs,
      maxDelayMs: this.options.retryMaxDelayMs,
      onFailure: (err, attempt, retryInMs) => {
        const code = typeof err === 'object' && err && 'code' in err ? String(err.code) : undefined;
        this.logger.warn(
          { code, err: errorMessage(err), attempt, retryInMs, records: this.batch?.count },
          `cannot ${what} the archive; keeping the batch uncommitted and retrying`,
        );
      },
    });
  }

  /**
   * Commits the offset owed, one commit at a time. Commits are cumulative: a failed one is retried
   * by the next tick, or covered by a later one.
   */
  private commitPending(): Promise<void> {
    if (this.commitRun) return this.commitRun;
    const next = this.pendingCommit;
    if (next === null || this.abort.signal.aborted) return Promise.resolve();
    this.commitRun = this.options
      .commit(next)
      .then(
        () => {
          if (this.pendingCommit === next) this.pendingCommit = null;
        },
        (err: unknown) => {
          this.logger.warn(
            { err: errorMessage(err), offset: String(next) },
            'offset commit failed; retrying',
          );
        },
      )
      .finally(() => {
        this.commitRun = null;
      });
    return this.commitRun;
  }
}
