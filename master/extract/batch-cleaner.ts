import type { Logger } from '../../shared/logger.js';
import type { ExtractFailureRow, ResultRow, SqlStore } from '../../shared/ports/sql-store.js';
import { cleanRecord, type CleanRecordOptions } from './clean-record.js';

/** A record as a reader hands it over: its bytes and where it was read (unique per record). */
export interface ReadRecord {
  value: Buffer;
  source: string;
}

export interface BatchCounts {
  results: number;
  failures: number;
  skipped: number;
}

export interface CleanerCounts extends BatchCounts {
  batches: number;
}

export interface BatchCleanerDeps {
  store: Pick<SqlStore, 'results' | 'extractFailures'>;
  options: CleanRecordOptions;
  logger: Logger;
}

/**
 * Cleans a batch of records and commits what came of them to SQL: results rows (idempotent on
 * the capture id) and failures (idempotent on where the record was read). Resolves once both are
 * committed, so the caller may then move its position past the batch; rejects, with nothing to
 * move past, when SQL or the blob store fails in a way that can pass (the batch is read again).
 * Both readers (Kafka, record files) use it, so they clean and commit the same way.
 */
export class BatchCleaner {
  readonly counts: CleanerCounts = { batches: 0, results: 0, failures: 0, skipped: 0 };

  constructor(private readonly deps: BatchCleanerDeps) {}

  async cleanAndCommit(records: readonly ReadRecord[]): Promise<BatchCounts> {
    const rows: ResultRow[] = [];
    const failures: ExtractFailureRow[] = [];
    let skipped = 0;
    for (const record of records) {
      const outcome = await cleanRecord(record.value, record.source, this.deps.options);
      if (outcome.kind === 'result') rows.push(outcome.row);
      else if (outcome.kind === 'failure') {
        failures.push(outcome.failure);
        const { source, code, reason, captureId, url } = outcome.failure;
        this.deps.logger.warn({ source, code, reason, captureId, url }, 'record not cleaned; skipped');
      } else skipped += 1;
    }
    // Failures first: a crash between the two commits then redoes only idempotent writes.
    await this.deps.store.extractFailures.record(failures);
    await this.deps.store.results.upsert(rows);
    const counts = { results: rows.length, failures: failures.length, skipped };
    this.counts.batches += 1;
    this.counts.results += counts.results;
    this.counts.failures += counts.failures;
    this.counts.skipped += counts.skipped;
    return counts;
  }
}
