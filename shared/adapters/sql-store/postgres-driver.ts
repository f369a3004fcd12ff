import pg from 'pg';
import type { Logger } from '../../logger.js';
import type { AppError } from '../../errors.js';
import { PG_SCHEMA_LOCK } from './ansi-statements.js';
import type { SqlDriver, SqlRow, SqlSession, SqlValue } from './driver.js';
import { toSqlError } from './errors.js';
import { classifyPostgresError } from './postgres-errors.js';

/**
 * PostgreSQL through a pg Pool. A transaction checks one client out of the pool for its whole
 * life; a client whose ROLLBACK failed is destroyed rather than handed to the next caller.
 */
export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;

  constructor(config: pg.PoolConfig, logger: Logger) {
    this.pool = new pg.Pool(config);
    // An idle client whose server went away emits here; without a listener it would crash the
    // process. The next query gets a fresh connection (or SQL_UNAVAILABLE).
    this.pool.on('error', (err) => {
      logger.warn(
        { driverCode: classifyPostgresError(err).driverCode },
        'sql store: an idle PostgreSQL connection failed',
      );
    });
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return (await this.pool.query<SqlRow>(sql, [...params])).rows;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return (await this.pool.query(sql, [...params])).rowCount ?? 0;
  }

  async transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn({
        all: async (sql, params = []) => (await client.query<SqlRow>(sql, [...params])).rows,
        run: async (sql, params = []) => (await client.query(sql, [...params])).rowCount ?? 0,
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error('rollback failed');
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /** The advisory lock is transaction-scoped: COMMIT or ROLLBACK releases it. */
  migrationTransaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.transaction(async (session) => {
      await session.all(PG_SCHEMA_LOCK);
      return fn(session);
    });
  }

  toError(err: unknown, op: string): AppError {
    return toSqlError('postgres', op, err, classifyPostgresError);
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
