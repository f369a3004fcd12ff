import type { AppError } from '../../errors.js';

export type SqlDialect = 'sqlite' | 'postgres' | 'mssql';

/** What a statement binds: text and whole or fractional numbers (booleans travel as 0/1). */
export type SqlValue = string | number | null;

export type SqlRow = Record<string, unknown>;

/**
 * One connection's worth of statements: outside a transaction any pooled connection, inside one
 * the transaction's. Placeholders are numbered in the dialect's own syntax ($1 for SQLite and
 * PostgreSQL, @v1 for SQL Server) and bind `params[n - 1]`.
 */
export interface SqlSession {
  all(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Rows affected. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

/**
 * A driver behind the store: the only place that speaks to better-sqlite3, pg or mssql. Errors
 * come out as the driver threw them; `toError` turns them into the catalogue's SQL_* codes.
 */
export interface SqlDriver extends SqlSession {
  readonly dialect: SqlDialect;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * A transaction that also holds the schema lock, so two processes migrating at once take turns:
   * SQLite `BEGIN IMMEDIATE`, PostgreSQL `pg_advisory_xact_lock`, SQL Server `sp_getapplock`.
   */
  migrationTransaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  toError(err: unknown, op: string): AppError;
  close(): Promise<void>;
}
