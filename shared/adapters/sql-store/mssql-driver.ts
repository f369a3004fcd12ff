import sql from 'mssql';
import { StorageError, type AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { SqlDriver, SqlRow, SqlSession, SqlValue } from './driver.js';
import { toSqlError } from './errors.js';
import { classifyMssqlError } from './mssql-errors.js';
import { MSSQL_SCHEMA_LOCK } from './mssql-statements.js';

/** NVARCHAR(4000) is the longest non-MAX parameter; longer text goes as NVARCHAR(MAX). */
const NVARCHAR_LIMIT = 4_000;

/**
 * The type each value is sent as (the driver would send every whole number as INT, which
 * overflows on millisecond times): whole numbers BIGINT, others FLOAT, text NVARCHAR, NULL as
 * NVARCHAR, which SQL Server converts to the column's type.
 */
function typeOf(value: SqlValue): sql.ISqlType | (() => sql.ISqlType) {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? sql.BigInt : sql.Float;
  if (typeof value === 'string' && value.length > NVARCHAR_LIMIT) return sql.NVarChar(sql.MAX);
  return sql.NVarChar(NVARCHAR_LIMIT);
}

function bind(request: sql.Request, params: readonly SqlValue[]): sql.Request {
  params.forEach((value, i) => request.input(`v${i + 1}`, typeOf(value), value));
  return request;
}

function session(newRequest: () => sql.Request): SqlSession {
  return {
    all: async (text, params = []) =>
      ((await bind(newRequest(), params).query(text)).recordset ?? []) as SqlRow[],
    run: async (text, params = []) =>
      (await bind(newRequest(), params).query(text)).rowsAffected.reduce((sum, n) => sum + n, 0),
  };
}

/**
 * SQL Server through an mssql ConnectionPool (tedious). Written from the mssql 12 documentation
 * and not run against a real server here: the contract suite runs it wherever MSSQL_URL is set.
 *
 * The pool connects on first use; a failed connect leaves no half-open pool behind, so the next
 * call tries again (SQL_UNAVAILABLE meanwhile). Transactions use `new sql.Transaction(pool)`,
 * which keeps every request of the transaction on one connection.
 */
export class MssqlDriver implements SqlDriver {
  readonly dialect = 'mssql' as const;
  private pool: Promise<sql.ConnectionPool> | null = null;
  private closed = false;

  constructor(
    private readonly config: sql.config,
    private readonly logger: Logger,
  ) {}

  async all(text: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    const pool = await this.connected();
    return session(() => pool.request()).all(text, params);
  }

  async run(text: string, params: readonly SqlValue[] = []): Promise<number> {
    const pool = await this.connected();
    return session(() => pool.request()).run(text, params);
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.inTransaction(fn, false);
  }

  /** sp_getapplock, owned by the transaction, so COMMIT or ROLLBACK releases it. */
  migrationTransaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.inTransaction(fn, true);
  }

  toError(err: unknown, op: string): AppError {
    return toSqlError('mssql', op, err, classifyMssqlError);
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    if (pool) await (await pool.catch(() => null))?.close();
  }

  private async inTransaction<T>(fn: (session: SqlSession) => Promise<T>, schemaLock: boolean): Promise<T> {
    const pool = await this.connected();
    const tx = new sql.Transaction(pool);
    await tx.begin(sql.ISOLATION_LEVEL.READ_COMMITTED);
    // With XACT_ABORT (or a deadlock) the server ends the transaction itself; rollback() would fail.
    let aborted = false;
    tx.on('rollback', (byServer: boolean) => {
      aborted = aborted || byServer;
    });
    try {
      if (schemaLock) await this.takeSchemaLock(tx);
      const result = await fn(session(() => new sql.Request(tx)));
      await tx.commit();
      return result;
    } catch (err) {
      if (!aborted) await tx.rollback().catch(() => undefined);
      throw err;
    }
  }

  private async takeSchemaLock(tx: sql.Transaction): Promise<void> {
    const lock = MSSQL_SCHEMA_LOCK;
    const result = await new sql.Request(tx)
      .input('Resource', sql.NVarChar(255), lock.resource)
      .input('LockMode', sql.VarChar(32), lock.lockMode)
      .input('LockOwner', sql.VarChar(32), lock.lockOwner)
      .input('LockTimeout', sql.Int, lock.lockTimeoutMs)
      .execute(lock.procedure);
    // 0 granted, 1 granted after waiting; -1 timeout, -2 cancelled, -3 deadlock victim, -999 bad call.
    const code = Number(result.returnValue);
    if (!(code >= 0)) {
      throw new StorageError(
        'SQL_BUSY',
        `sql store (mssql) migrate: the schema lock was not granted (sp_getapplock ${code})`,
        {
          details: { dialect: 'mssql', op: 'migrate', driverCode: `sp_getapplock ${code}` },
        },
      );
    }
  }

  private connected(): Promise<sql.ConnectionPool> {
    if (this.closed) return Promise.reject(new StorageError('SQL_CLOSED', 'sql store (mssql) is closed'));
    if (!this.pool) {
      const pool = new sql.ConnectionPool(this.config);
      pool.on('error', (err: unknown) => {
        this.logger.warn(
          { driverCode: classifyMssqlError(err).driverCode },
          'sql store: a SQL Server connection failed',
        );
      });
      const connecting = pool.connect().catch(async (err: unknown) => {
        if (this.pool === connecting) this.pool = null;
        await pool.close().catch(() => undefined);
        throw err;
      });
      this.pool = connecting;
    }
    return this.pool;
  }
}
