import type { SqlFailure } from './errors.js';
import { conflictField, networkCode, tlsCode } from './errors.js';

/**
 * pg's errors to what they mean for the caller: server errors carry a SQLSTATE in `code`
 * (https://www.postgresql.org/docs/current/errcodes-appendix.html); a lost or refused connection
 * is a Node socket error or one of pg's own messages, which carry no code.
 */
export function classifyPostgresError(err: unknown): SqlFailure {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    constraint?: unknown;
    message?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    const driverCode = `SQLSTATE ${code}`;
    if (code === '23505') {
      const field = conflictField(typeof e.constraint === 'string' ? e.constraint : undefined);
      return field === undefined ? { kind: 'conflict', driverCode } : { kind: 'conflict', driverCode, field };
    }
    // serialization failure, deadlock, lock not available, statement timeout / cancel
    if (['40001', '40P01', '55P03', '57014'].includes(code)) return { kind: 'busy', driverCode };
    // bad password, no such role, no such database, no privilege
    if (['28P01', '28000', '3D000', '42501'].includes(code)) return { kind: 'auth', driverCode };
    // connection exceptions, admin/crash shutdown, cannot connect now, too many connections, disk full
    if (/^08/.test(code) || /^57P0[123]$/.test(code) || /^53/.test(code))
      return { kind: 'unavailable', driverCode };
    // value too long, untranslatable or invalid character, numeric out of range
    if (['22001', '22P05', '22021', '22003'].includes(code)) return { kind: 'invalid', driverCode };
    return { kind: 'query', driverCode };
  }
  const tls = tlsCode(err);
  if (tls) return { kind: 'auth', driverCode: tls };
  const network = networkCode(err);
  if (network) return { kind: 'unavailable', driverCode: network };
  const message = typeof e.message === 'string' ? e.message : '';
  if (/does not support SSL/i.test(message)) return { kind: 'auth', driverCode: 'NO_SSL' };
  if (
    /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Connection ended|ended unexpectedly/i.test(
      message,
    )
  ) {
    return { kind: 'unavailable', driverCode: 'CONNECTION_LOST' };
  }
  return { kind: 'query', driverCode: err instanceof Error ? err.name : 'unknown' };
}
