import Database from 'better-sqlite3';
import type { SqlFailure } from './errors.js';
import { conflictField } from './errors.js';

/** better-sqlite3's SqliteError codes (extended result codes) to what they mean for the caller. */
export function classifySqliteError(err: unknown): SqlFailure {
  if (!(err instanceof Database.SqliteError)) {
    // better-sqlite3 throws TypeError/RangeError when the file cannot be opened at all (a missing
    // directory) or a value cannot be bound; the first is the common one at open.
    const message = err instanceof Error ? err.message : '';
    const fsCode = (err as { code?: unknown } | null)?.code;
    if (
      typeof fsCode === 'string' &&
      /^E(NOTDIR|EXIST|ACCES|PERM|ROFS|NOSPC|NOENT|IO|MFILE|NFILE|BUSY)$/.test(fsCode)
    ) {
      // Making the file's folder failed (mkdir): a path or permission to fix, or a disk to free.
      return { kind: 'unavailable', driverCode: fsCode };
    }
    if (/cannot open|directory does not exist|unable to open/i.test(message)) {
      return { kind: 'unavailable', driverCode: 'SQLITE_CANTOPEN' };
    }
    return { kind: 'query', driverCode: err instanceof Error ? err.name : 'unknown' };
  }
  const code = err.code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: jobs.name" names the table and column, never the value.
    const column = /constraint failed: ([\w.]+)/.exec(err.message)?.[1];
    const field = conflictField(column);
    return field === undefined
      ? { kind: 'conflict', driverCode: code }
      : { kind: 'conflict', driverCode: code, field };
  }
  if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return { kind: 'busy', driverCode: code };
  if (/^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|PERM|NOLFS)/.test(code))
    return { kind: 'unavailable', driverCode: code };
  if (/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return { kind: 'corrupt', driverCode: code };
  if (/^SQLITE_(TOOBIG|RANGE|MISMATCH)/.test(code)) return { kind: 'invalid', driverCode: code };
  return { kind: 'query', driverCode: code };
}
