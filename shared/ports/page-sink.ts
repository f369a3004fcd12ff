/**
 * Where page records go. `value` is one page record as one line of JSON (no newline); `key` is
 * its normalised URL. A record is durable once `write` resolves; the scheduler acks only then.
 */
export interface SinkRecord {
  key: string;
  value: Buffer;
}

export interface PageSink {
  /** Durably append records, in order. Resolves with an opaque checkpoint after the last one. */
  write(records: readonly SinkRecord[]): Promise<string | null>;

  /**
   * After a crash: the records durably written after `checkpoint` (records whose settlement may
   * not have reached the frontier). A sink that cannot tell returns []; duplicates follow.
   */
  recover(checkpoint: string | null): Promise<SinkRecord[]>;

  close(): Promise<void>;
}
