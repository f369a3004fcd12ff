import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import sql from 'mssql';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { parseSqlUrl } from '../../shared/adapters/sql-store/sql-url.js';
import { sqlStoreContract } from './sql-store.contract.js';
import { rejectsWith } from './sql-store/expect.js';

/**
 * The SQL Server adapter through the same contract suite, against the server MSSQL_URL names
 * (e.g. mssql://sa:Secret-1@127.0.0.1:1433/master?trustServerCertificate=true; the login may
 * create databases). SQL Server cannot run on this project's machines, so without MSSQL_URL the
 * suite is reported as skipped, saying why.
 */
const MSSQL_URL = process.env.MSSQL_URL;

const withDatabase = (url: string, database: string): string => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

sqlStoreContract(
  'mssql sql store',
  async () => {
    const url = MSSQL_URL ?? '';
    const target = parseSqlUrl(url);
    if (target.dialect !== 'mssql') throw new Error('MSSQL_URL must be an mssql:// or sqlserver:// URL');
    const admin = await new sql.ConnectionPool(target.config).connect();
    const prefix = `ackcrawl_test_${randomBytes(5).toString('hex')}`;
    const made: string[] = [];
    return {
      fresh: async () => {
        const name = `${prefix}_${made.length + 1}`;
        await admin.request().batch(`CREATE DATABASE [${name}]`);
        made.push(name);
        const dbUrl = withDatabase(url, name);
        return { open: (options) => openSqlStore(dbUrl, options) };
      },
      teardown: async () => {
        for (const name of made) {
          await admin
            .request()
            .batch(
              `ALTER DATABASE [${name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [${name}]`,
            )
            .catch(() => undefined);
        }
        await admin.close();
      },
    };
  },
  MSSQL_URL
    ? {}
    : {
        skip: 'MSSQL_URL is not set: the SQL Server adapter runs this contract suite only against a real SQL Server, and none runs here',
      },
);

describe('mssql sql store: adapter specifics that need no server', () => {
  it('an unreachable server is SQL_UNAVAILABLE (retriable), and the message holds no password', async () => {
    const password = 'Not-The-Password-7c1e';
    // Nothing listens on port 1; the driver's connect fails with a ConnectionError.
    const err = await rejectsWith(
      openSqlStore(`mssql://sa:${password}@127.0.0.1:1/master?encrypt=false&connectTimeoutMs=2000`),
      'SQL_UNAVAILABLE',
    );
    assert.equal(err.retriable, true);
    assert.ok(!err.message.includes(password));
    assert.ok(!JSON.stringify(err.details).includes(password));
  });
});
