import Database from 'better-sqlite3';
import { dirname } from 'node:path';
import { AppError, StorageError, errorMessage } from '../../errors.js';
import { formatBytes, freeBytes, isDiskFull } from '../disk-space.js';

/**
 * Turns whatever SQLite (or better-sqlite3's argument checks) threw into a StorageError that says
 * what happens next: a corrupt file needs a person (FRONTIER_CORRUPT, not retriable); a full disk
 * waits for space (FRONTIER_DISK_FULL, retriable, naming the file and the space left); a busy or
 * failing disk may recover (FRONTIER_IO, retriable); anything else better-sqlite3 throws (a missing
 * directory, a bad binding) will fail the same way again (FRONTIER_IO, not retriable). AppErrors
 * pass through unchanged.
 */
export function toFrontierError(err: unknown, op: string, path: string): AppError {
  if (err instanceof AppError) return err;
  const sqliteCode = err instanceof Database.SqliteError ? err.code : undefined;
  const details = { op, path, ...(sqliteCode === undefined ? {} : { sqliteCode }) };
  const message = `sqlite frontier ${op} failed (${path}): ${errorMessage(err)}`;
  if (sqliteCode !== undefined && /^SQLITE_(CORRUPT|NOTADB)/.test(sqliteCode)) {
    return new StorageError('FRONTIER_CORRUPT', message, { cause: err, details });
  }
  if (sqliteCode === 'SQLITE_FULL' || isDiskFull(err)) {
    const free = freeBytes(dirname(path));
    return new StorageError(
      'FRONTIER_DISK_FULL',
      `the disk holding ${path} is full (${formatBytes(free)} free): the frontier cannot ${op} until space is freed there; nothing is acknowledged meanwhile, and the crawl resumes by itself`,
      { cause: err, details: { ...details, freeBytes: free } },
    );
  }
  // SQLite's own I/O errors may pass; anything else (the file cannot be opened at all) will not.
  return new StorageError(sqliteCode === undefined ? 'FRONTIER_ACCESS' : 'FRONTIER_IO', message, {
    cause: err,
    details,
  });
}

export function closedError(path: string): StorageError {
  return new StorageError('FRONTIER_CLOSED', `sqlite frontier ${path} is closed`, {
    details: { path },
  });
}
