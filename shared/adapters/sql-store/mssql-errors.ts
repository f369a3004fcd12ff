import type { SqlFailure } from './errors.js';
import { conflictField, networkCode, tlsCode } from './errors.js';

/**
 * mssql's errors to what they mean for the caller. Server errors are RequestErrors with the SQL
 * Server error `number` (https://learn.microsoft.com/sql/relational-databases/errors-events/database-engine-events-and-errors);
 * connection failures are ConnectionErrors with mssql's `code` (ELOGIN, ESOCKET, ETIMEOUT, …);
 * a TransactionError wraps the error that ended the transaction as `originalError`.
 */
export function classifyMssqlError(err: unknown, depth = 0): SqlFailure {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    name?: unknown;
    code?: unknown;
    number?: unknown;
    message?: unknown;
    originalError?: unknown;
  };
  const number = typeof e.number === 'number' ? e.number : undefined;
  if (number !== undefined) {
    const driverCode = `mssql ${number}`;
    if (number === 2627 || number === 2601) {
      // "Violation of UNIQUE KEY constraint 'jobs_name_key'…" / "…with unique index 'x'…": the
      // message also holds the duplicate value, so only the constraint name is taken from it.
      const message = typeof e.message === 'string' ? e.message : '';
      const name = /(?:constraint|unique index) '([^']+)'/.exec(message)?.[1];
      const field = conflictField(name);
      return field === undefined ? { kind: 'conflict', driverCode } : { kind: 'conflict', driverCode, field };
    }
    if (number === 1205 || number === 1222) return { kind: 'busy', driverCode }; // deadlock victim, lock timeout
    // login failed, cannot open database, permission denied
    if ([18456, 4060, 229, 262, 916].includes(number)) return { kind: 'auth', driverCode };
    // string or binary data would be truncated, arithmetic overflow
    if ([8152, 2628, 8115].includes(number)) return { kind: 'invalid', driverCode };
    // server shutting down, database in transition, tempdb full, log full, service busy
    if ([6005, 952, 1105, 9002, 40501, 40613, 10928, 10929].includes(number)) {
      return { kind: 'unavailable', driverCode };
    }
    return { kind: 'query', driverCode };
  }
  const code = typeof e.code === 'string' ? e.code : undefined;
  const tls = tlsCode(err) ?? (depth < 3 ? tlsCode(e.originalError) : undefined);
  if (tls) return { kind: 'auth', driverCode: tls };
  if (code === 'ELOGIN') return { kind: 'auth', driverCode: code };
  if (
    code !== undefined &&
    ['ESOCKET', 'ETIMEOUT', 'ECONNCLOSED', 'EINSTLOOKUP', 'ENOTOPEN', 'ENOCONN', 'ECONNRESET'].includes(code)
  ) {
    return { kind: 'unavailable', driverCode: code };
  }
  const network = networkCode(err);
  if (network) return { kind: 'unavailable', driverCode: network };
  // A TransactionError (EABORT, …) or a wrapped tedious error: what ended it decides.
  if (depth < 3 && e.originalError !== undefined) {
    const inner = classifyMssqlError(e.originalError, depth + 1);
    if (inner.kind !== 'query') return inner;
  }
  return { kind: 'query', driverCode: code ?? (err instanceof Error ? err.name : 'unknown') };
}
