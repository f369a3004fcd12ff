import { AppError } from '../errors.js';

/**
 * Where page records go. `value` is one page record as one line of JSON (no newline); `key` is
 * its normalised URL. A record is durable once `write` resolves; the scheduler acks only then.
 */
export interface SinkRecord {
  key: string;
  value: Buffer;
}

export interface PageSink {
  /**
   * Durably append records, in order. Resolves with an opaque checkpoint after the last one.
   * Rejects with a non-retriable SINK_RECORD_TOO_LARGE when a record itself can never be stored
   * (see isRecordRefused); every other failure is the sink's (down, full, misconfigured) and says
   * nothing about the records, which the caller keeps and writes again.
   */
  write(records: readonly SinkRecord[]): Promise<string | null>;

  /**
   * After a crash: the records durably written after `checkpoint` (records whose settlement may
   * not have reached the frontier). A sink that cannot tell returns []; duplicates follow.
   */
  recover(checkpoint: string | null): Promise<SinkRecord[]>;

  close(): Promise<void>;
}

/** The code a sink rejects a write with when a record can never be stored, whatever is retried. */
export const RECORD_REFUSED_CODE = 'SINK_RECORD_TOO_LARGE';

/**
 * True when the sink refused a write because of a record in it (too large even after the claim
 * check), not because of the sink itself: only then may a record be replaced by a failure record.
 * A store that is down, full or refuses our credentials must stall the crawl instead.
 */
export function isRecordRefused(err: unknown): err is AppError {
  return err instanceof AppError && !err.retriable && err.code === RECORD_REFUSED_CODE;
}
