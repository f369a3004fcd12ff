import assert from 'node:assert/strict';
import { LATEST_VERSION, MIGRATIONS, type Migration } from '../../../shared/adapters/sql-store/migrations.js';
import type { DefineCase } from '../sql-store.contract.js';
import { job, rejectsWith } from './expect.js';

const ALL_VERSIONS = MIGRATIONS.map((m) => m.version);

/** A migration with the same statement on every dialect. */
function extra(version: number, statements: string[]): Migration {
  return {
    version,
    description: `test migration ${version}`,
    statements: { sqlite: statements, postgres: statements, mssql: statements },
  };
}

export function schemaCases(define: DefineCase): void {
  define('migrating twice is a no-op; a new store on a current schema applies nothing', async ({ fresh }) => {
    const empty = await fresh();
    const first = await empty.open({ migrate: false });
    try {
      assert.deepEqual(await first.migrate(), { version: LATEST_VERSION, applied: ALL_VERSIONS });
      assert.deepEqual(await first.migrate(), { version: LATEST_VERSION, applied: [] });
    } finally {
      await first.close();
    }
    const second = await empty.open();
    try {
      assert.deepEqual(await second.migrate(), { version: LATEST_VERSION, applied: [] });
      assert.equal(await second.ping(), true);
    } finally {
      await second.close();
    }
  });

  define('two stores migrating an empty database at once apply each migration once', async ({ fresh }) => {
    const empty = await fresh();
    const [a, b] = await Promise.all([empty.open({ migrate: false }), empty.open({ migrate: false })]);
    try {
      const [ra, rb] = await Promise.all([a.migrate(), b.migrate()]);
      assert.equal(ra.version, LATEST_VERSION);
      assert.equal(rb.version, LATEST_VERSION);
      assert.deepEqual(
        [...ra.applied, ...rb.applied].sort((x, y) => x - y),
        ALL_VERSIONS,
      );
      await a.jobs.create(job({ id: 'made-by-a' }));
      assert.equal((await b.jobs.get('made-by-a'))?.id, 'made-by-a');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  define(
    'a later migration applies on top, and a database newer than the build is refused',
    async ({ another }) => {
      const table = 'ackcrawl_contract_probe';
      const newer = [...MIGRATIONS, extra(LATEST_VERSION + 1, [`CREATE TABLE ${table} (id INT NOT NULL)`])];
      const upgraded = await another({ migrate: false, migrations: newer });
      assert.deepEqual(await upgraded.migrate(), {
        version: LATEST_VERSION + 1,
        applied: [LATEST_VERSION + 1],
      });
      const old = await another({ migrate: false });
      const err = await rejectsWith(old.migrate(), 'SQL_SCHEMA_NEWER');
      assert.equal(err.retriable, false);
      assert.match(err.message, new RegExp(`version ${LATEST_VERSION + 1}`));
    },
  );

  define(
    'a failing migration is rolled back whole (SQL_MIGRATION_FAILED naming it)',
    async ({ store, another }) => {
      await store.jobs.create(job({ id: 'kept' }));
      const v = LATEST_VERSION + 1;
      const broken = [
        ...MIGRATIONS,
        extra(v, [
          'CREATE TABLE ackcrawl_half_done (id INT NOT NULL)',
          'CREATE TABLE jobs (id INT NOT NULL)',
        ]),
      ];
      const failing = await another({ migrate: false, migrations: broken });
      const err = await rejectsWith(failing.migrate(), 'SQL_MIGRATION_FAILED', { version: v });
      assert.match(err.message, new RegExp(`migration ${v} \\(test migration ${v}\\)`));
      assert.doesNotMatch(err.message, /CREATE TABLE/i);
      // Its first table was rolled back with it: the fixed migration can create it again.
      const fixed = await another({
        migrate: false,
        migrations: [...MIGRATIONS, extra(v, ['CREATE TABLE ackcrawl_half_done (id INT NOT NULL)'])],
      });
      assert.deepEqual(await fixed.migrate(), { version: v, applied: [v] });
      assert.equal((await store.jobs.get('kept'))?.id, 'kept');
    },
  );

  define(
    'ping answers true while open; a closed store answers SQL_CLOSED and ping false',
    async ({ another }) => {
      const s = await another();
      assert.equal(await s.ping(), true);
      await s.close();
      await s.close(); // twice is fine
      assert.equal(await s.ping(), false);
      await rejectsWith(s.jobs.get('x'), 'SQL_CLOSED');
      await rejectsWith(s.migrate(), 'SQL_CLOSED');
    },
  );

  define('reopening keeps every row', async ({ store, another }) => {
    const j = await store.jobs.create(job({ settings: { nested: { a: [1, 2, { b: 'ü' }] } } }));
    await store.runs.create({
      id: 'reopen-run',
      jobId: j.id,
      state: 'running',
      settings: j.settings,
      counters: { done: 3, failed: 1, queued: 2, inFlight: 1, pagesPerSecond: 1.5, notModified: 0 },
      createdAt: 5,
      startedAt: 6,
      endedAt: null,
      schedulerId: 'sched-1',
      heartbeatAt: 7,
      error: null,
      scheduledBy: null,
    });
    await store.logs.append([
      {
        runId: 'reopen-run',
        url: 'http://a/',
        code: 'TIMEOUT',
        attempts: 1,
        lastError: 'slow',
        final: false,
        at: 8,
      },
    ]);
    await store.results.upsert([
      {
        captureId: 'cap-1',
        runId: 'reopen-run',
        jobId: j.id,
        url: 'http://a/',
        status: 200,
        data: { t: 1 },
        at: 9,
        title: 'A',
        author: null,
        publishedAt: 1,
        language: 'en',
        description: null,
        canonicalUrl: null,
        mainText: 'text',
        fetchedAt: 2,
      },
    ]);
    await store.tokens.create({
      id: 'tok-1',
      name: 'admin',
      scopes: ['admin'],
      hash: 'a'.repeat(64),
      createdAt: 10,
      revokedAt: null,
      lastUsedAt: null,
    });
    await store.close();

    const reopened = await another();
    assert.deepEqual(await reopened.jobs.get(j.id), j);
    assert.equal((await reopened.runs.get('reopen-run'))?.counters.pagesPerSecond, 1.5);
    assert.equal((await reopened.logs.list('reopen-run')).items.length, 1);
    assert.deepEqual((await reopened.results.list('reopen-run')).items[0]?.data, { t: 1 });
    assert.equal((await reopened.tokens.findByHash('a'.repeat(64)))?.id, 'tok-1');
  });
}
