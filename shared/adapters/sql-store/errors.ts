import { AppError, InvalidInputError, StorageError } from '../../errors.js';
import type { SqlDialect } from './driver.js';

/**
 * What a driver's error means for the caller, decided by each driver's classifier
 * (sqlite-errors.ts, postgres-errors.ts, mssql-errors.ts) from its codes, never from SQL text.
 */
export type SqlFailureKind = 'conflict' | 'unavailable' | 'busy' | 'auth' | 'invalid' | 'corrupt' | 'query';

export interface SqlFailure {
  kind: SqlFailureKind;
  /** The driver's own code (SQLITE_BUSY, SQLSTATE 23505, mssql 2627, ECONNREFUSED), for logs. */
  driverCode: string;
  /** For a conflict: the port's field that collided (`id`, `name`, `hash`, `captureId`). */
  field?: string;
}

/** Unique constraints by name (PostgreSQL, SQL Server) and by `table.column` (SQLite). */
const CONFLICT_FIELDS: Readonly<Record<string, string>> = {
  jobs_pkey: 'id',
  'jobs.id': 'id',
  jobs_name_key: 'name',
  'jobs.name': 'name',
  runs_pkey: 'id',
  'runs.id': 'id',
  results_pkey: 'captureId',
  'results.capture_id': 'captureId',
  tokens_pkey: 'id',
  'tokens.id': 'id',
  tokens_hash_key: 'hash',
  'tokens.hash': 'hash',
  alert_rules_pkey: 'id',
  'alert_rules.id': 'id',
  alert_rules_name_key: 'name',
  'alert_rules.name': 'name',
  alerts_pkey: 'id',
  'alerts.id': 'id',
  alerts_dedupe_key: 'dedupeKey',
  'alerts.dedupe_key': 'dedupeKey',
  webhooks_pkey: 'id',
  'webhooks.id': 'id',
  webhook_deliveries_pkey: 'id',
  'webhook_deliveries.id': 'id',
  ackcrawl_schema_version_pkey: 'version',
  'ackcrawl_schema_version.version': 'version',
};

export function conflictField(constraint: string | undefined): string | undefined {
  return constraint === undefined ? undefined : CONFLICT_FIELDS[constraint];
}

/**
 * The catalogue's error for a classified failure. Messages name the operation, the dialect and
 * the driver's code, never the statement, the values or the URL (which may hold a password);
 * the driver's error stays as `cause` for the log.
 */
export function sqlError(dialect: SqlDialect, op: string, failure: SqlFailure, cause: unknown): AppError {
  const where = `sql store (${dialect}) ${op}`;
  const details = { dialect, op, driverCode: failure.driverCode };
  switch (failure.kind) {
    case 'conflict': {
      const field = failure.field ?? 'key';
      return new AppError('SQL_CONFLICT', `${where}: a row with this ${field} exists already`, {
        cause,
        details: { ...details, field },
      });
    }
    case 'unavailable':
      return new StorageError(
        'SQL_UNAVAILABLE',
        `${where}: the database cannot be reached or the connection was lost (${failure.driverCode})`,
        { cause, details },
      );
    case 'busy':
      return new StorageError(
        'SQL_BUSY',
        `${where}: the database gave up on a lock (${failure.driverCode}); try again`,
        { cause, details },
      );
    case 'auth':
      return new StorageError(
        'SQL_AUTH',
        `${where}: the database refused this client (${failure.driverCode}): check the user, password, database and TLS settings`,
        { cause, details },
      );
    case 'invalid':
      return new InvalidInputError(
        'SQL_INVALID_VALUE',
        `${where}: a value the column cannot hold (${failure.driverCode})`,
        {
          cause,
          details,
        },
      );
    case 'corrupt':
      return new StorageError(
        'SQL_CORRUPT',
        `${where}: the database file is damaged or not a database (${failure.driverCode})`,
        {
          cause,
          details,
        },
      );
    case 'query':
      return new StorageError(
        'SQL_QUERY_FAILED',
        `${where}: the database rejected the statement (${failure.driverCode})`,
        {
          cause,
          details,
        },
      );
  }
}

/** AppErrors (the store's own checks) pass through; anything else is classified. */
export function toSqlError(
  dialect: SqlDialect,
  op: string,
  err: unknown,
  classify: (err: unknown) => SqlFailure,
): AppError {
  if (err instanceof AppError) return err;
  return sqlError(dialect, op, classify(err), err);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
]);

/** A socket-level failure of Node's own (also inside an AggregateError of several addresses). */
export function networkCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const found = networkCode(inner);
      if (found) return found;
    }
  }
  return undefined;
}

const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|CERT_)/;

/** A certificate that did not verify: a setting to fix, not an outage. */
export function tlsCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && TLS_CODE.test(code) ? code : undefined;
}
