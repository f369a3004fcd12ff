import type { Logger } from '../logger.js';
import type { LogRow, SqlStore } from '../ports/sql-store.js';
import { BatchedWriter, type BatchedWriterOptions } from './batched-writer.js';

/** What a log row holds in memory, roughly: its text (UTF-16) plus the object around it. */
export function logRowBytes(row: LogRow): number {
  return 2 * (row.runId.length + row.url.length + row.code.length + row.lastError.length) + 96;
}

/** The batched writer of the SQL failure log: what the scheduler hands retries and final failures. */
export function createSqlLogWriter(
  store: Pick<SqlStore, 'logs'>,
  options: Omit<BatchedWriterOptions<LogRow>, 'name' | 'write' | 'sizeOf'> & { logger?: Logger } = {},
): BatchedWriter<LogRow> {
  return new BatchedWriter<LogRow>({
    ...options,
    name: 'sql log',
    write: (rows) => store.logs.append(rows),
    sizeOf: logRowBytes,
  });
}
