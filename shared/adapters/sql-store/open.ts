import type { Logger } from '../../logger.js';
import { silentLogger } from '../../logger.js';
import type { SqlStore } from '../../ports/sql-store.js';
import { POSTGRES_STATEMENTS, SQLITE_STATEMENTS } from './ansi-statements.js';
import type { SqlDriver } from './driver.js';
import { toSqlError } from './errors.js';
import type { Migration } from './migrations.js';
import { MSSQL_STATEMENTS } from './mssql-statements.js';
import { SqliteDriver } from './sqlite-driver.js';
import { classifySqliteError } from './sqlite-errors.js';
import { DriverSqlStore } from './sql-store.js';
import { parseSqlUrl, type SqlTarget } from './sql-url.js';
import type { Statements } from './statements.js';

export interface OpenSqlStoreOptions {
  logger?: Logger;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** PEM CA bundle for the server's certificate (ACKCRAWL_SQL_CA_FILE). */
  caFile?: string;
  /** SQLite: how long to wait for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** PostgreSQL, SQL Server: connections per pool (default 10). */
  poolMax?: number;
  now?: () => number;
  migrations?: readonly Migration[];
}

async function driverFor(
  target: SqlTarget,
  options: OpenSqlStoreOptions,
  logger: Logger,
): Promise<[SqlDriver, Statements]> {
  switch (target.dialect) {
    case 'sqlite':
      try {
        return [
          new SqliteDriver({
            path: target.path,
            ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
          }),
          SQLITE_STATEMENTS,
        ];
      } catch (err) {
        throw toSqlError('sqlite', 'open', err, classifySqliteError);
      }
    // The server drivers are loaded for their dialect only: pg and mssql (tedious) cost tens of MB
    // of memory in every process that opens SQLite.
    case 'postgres': {
      const { PostgresDriver } = await import('./postgres-driver.js');
      return [new PostgresDriver(target.config, logger), POSTGRES_STATEMENTS];
    }
    case 'mssql': {
      const { MssqlDriver } = await import('./mssql-driver.js');
      return [new MssqlDriver(target.config, logger), MSSQL_STATEMENTS];
    }
  }
}

/**
 * Opens the SQL store a URL names (see sql-url.ts) and, unless told not to, migrates it. The
 * roles call this with `sqlStoreUrlFromEnv` (shared/config/sql-settings.ts).
 */
export async function openSqlStore(url: string, options: OpenSqlStoreOptions = {}): Promise<SqlStore> {
  const logger = options.logger ?? silentLogger();
  const target = parseSqlUrl(url, {
    ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
    ...(options.poolMax === undefined ? {} : { poolMax: options.poolMax }),
  });
  const [driver, statements] = await driverFor(target, options, logger);
  const store = new DriverSqlStore(driver, statements, {
    ...(options.now ? { now: options.now } : {}),
    ...(options.migrations ? { migrations: options.migrations } : {}),
  });
  if (options.migrate !== false) {
    try {
      const report = await store.migrate();
      if (report.applied.length > 0) {
        logger.info(
          { dialect: target.dialect, version: report.version, applied: report.applied },
          'sql store: schema migrated',
        );
      }
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
  }
  return store;
}
