import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { postgresUrl, requirePostgres } from '../helpers/services.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { waitFor } from '../helpers/wait-for.js';
import { sqlStoreContract } from './sql-store.contract.js';
import { job, rejectsWith } from './sql-store/expect.js';

const inSchema = (url: string, schema: string): string => {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
};

sqlStoreContract('postgres sql store', async () => {
  const db = await scratchPostgres();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let n = 0;
  return {
    fresh: async () => {
      const schema = `case_${++n}`;
      await client.query(`CREATE SCHEMA ${schema}`);
      const url = inSchema(db.url, schema);
      return { open: (options) => openSqlStore(url, options) };
    },
    teardown: async () => {
      await client.end();
      await db.drop();
    },
  };
});

describe('postgres sql store: adapter specifics', () => {
  const password = 'not-the-password-9f3a';

  it('an unreachable server is SQL_UNAVAILABLE (retriable) and the message holds no password', async () => {
    const err = await rejectsWith(
      openSqlStore(`postgres://ackcrawl:${password}@127.0.0.1:1/ackcrawl`),
      'SQL_UNAVAILABLE',
    );
    assert.equal(err.retriable, true);
    assert.ok(!err.message.includes(password));
    assert.ok(!JSON.stringify(err.details).includes(password));
  });

  it('a wrong password, a missing database and a TLS refusal are SQL_AUTH, without secrets', async () => {
    await requirePostgres();
    const base = new URL(postgresUrl);
    const wrong = new URL(base);
    wrong.password = password;
    const e1 = await rejectsWith(openSqlStore(wrong.toString()), 'SQL_AUTH', {
      driverCode: 'SQLSTATE 28P01',
    });
    assert.equal(e1.retriable, false);
    assert.ok(!e1.message.includes(password));
    const missing = new URL(base);
    missing.pathname = '/ackcrawl_no_such_database';
    await rejectsWith(openSqlStore(missing.toString()), 'SQL_AUTH', { driverCode: 'SQLSTATE 3D000' });
    // The services' PostgreSQL speaks no TLS: asking for it must fail, never fall back to clear text.
    const tls = new URL(base);
    tls.searchParams.set('sslmode', 'verify-full');
    await rejectsWith(openSqlStore(tls.toString()), 'SQL_AUTH');
  });

  it('survives its connections being killed: no crash, the next call reconnects', async () => {
    const db = await scratchPostgres();
    const store = await openSqlStore(db.url);
    const killer = new pg.Client({ connectionString: postgresUrl });
    await killer.connect();
    try {
      await store.jobs.create(job({ id: 'before-kill' }));
      const name = new URL(db.url).pathname.slice(1);
      const killed = await killer.query(
        // Client backends only: an autovacuum worker on this database runs as a superuser, and
        // terminating it is refused ("must be a superuser to terminate superuser process").
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [name],
      );
      assert.ok(killed.rows.length >= 1, 'the store had a connection to kill');
      // The idle client's error is handled by the pool; a query may see SQL_UNAVAILABLE once.
      await waitFor(
        async () => (await store.jobs.get('before-kill').catch(() => null))?.id === 'before-kill',
        {
          timeoutMs: 10_000,
        },
      );
      await store.jobs.create(job({ id: 'after-kill' }));
    } finally {
      await killer.end();
      await store.close();
      await db.drop();
    }
  });
});
