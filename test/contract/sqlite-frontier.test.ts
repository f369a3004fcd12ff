import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';
import { silentLogger } from '../../shared/logger.js';
import { frontierContract } from './frontier.contract.js';
import { ref, task, tasks } from './frontier-contract-kit.js';

function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-frontier-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Tasks of a run in the file, read beside the frontier that has it open. */
function taskRows(path: string, runId: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM tasks WHERE run_id = ?').get(runId) as { n: number }).n;
  } finally {
    db.close();
  }
}

frontierContract('sqlite', async ({ clock }) => {
  const { dir, remove } = tempDir();
  const path = join(dir, 'frontier.db');
  const open: SqliteFrontier[] = [];
  const openOne = (): SqliteFrontier => {
    const frontier = openSqliteFrontier({ path, clock: clock.fn });
    open.push(frontier);
    return frontier;
  };
  return {
    frontier: openOne(),
    // The first handle is abandoned, never closed, as a killed process would leave it.
    reopen: async () => openOne(),
    cleanup: async () => {
      for (const frontier of open) await frontier.close();
      remove();
    },
  };
});

describe('sqlite frontier: adapter specifics', () => {
  const withFile = async (body: (path: string, clock: FakeClock) => Promise<void>): Promise<void> => {
    const { dir, remove } = tempDir();
    try {
      await body(join(dir, 'frontier.db'), new FakeClock());
    } finally {
      remove();
    }
  };

  it('releaseAllLeases puts every lease of a dead run back, attempt unchanged', () =>
    withFile(async (path, clock) => {
      const first = openSqliteFrontier({ path, clock: clock.fn });
      await first.push(tasks('https://a.test/', 5));
      assert.equal((await first.lease(3)).length, 3);
      const second = openSqliteFrontier({ path, clock: clock.fn });
      assert.equal((await second.stats()).leased, 3);
      assert.equal(second.releaseAllLeases(), 3);
      assert.deepEqual(await second.stats(), {
        ready: 5,
        delayed: 0,
        leased: 0,
        done: 0,
        failed: 0,
        total: 5,
        cancelled: 0,
      });
      const again = await second.lease(10);
      assert.equal(again.length, 5);
      assert.ok(again.every((l) => l.attempt === 1));
      await first.close();
      await second.close();
    }));

  it('rolls a settlement back whole when SQLite fails half way, counters included', () =>
    withFile(async (path, clock) => {
      const frontier = openSqliteFrontier({ path, clock: clock.fn });
      await frontier.push(tasks('https://a.test/', 2));
      const [l0, l1] = await frontier.lease(2);
      assert.ok(l0 && l1);
      const raw = new Database(path);
      raw.exec(`CREATE TRIGGER boom BEFORE INSERT ON tasks WHEN NEW.url = 'https://b.test/boom'
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
      raw.close();
      await assert.rejects(
        frontier.settle({
          acks: [
            { lease: ref(l0), discovered: [task('https://b.test/ok')] },
            { lease: ref(l1), discovered: [task('https://b.test/boom')] },
          ],
          retries: [],
          failures: [],
          checkpoint: 'never',
        }),
        { name: 'StorageError', code: 'FRONTIER_IO', retriable: true },
      );
      assert.equal(await frontier.checkpoint(), null);
      assert.deepEqual(await frontier.stats(), {
        ready: 0,
        delayed: 0,
        leased: 2,
        done: 0,
        failed: 0,
        total: 2,
        cancelled: 0,
      });
      const result = await frontier.settle({
        acks: [{ lease: ref(l0), discovered: [task('https://b.test/ok')] }],
        retries: [],
        failures: [],
      });
      assert.deepEqual(result, { applied: 1, accepted: 1 });
      await frontier.close();
    }));

  it('refuses a file written by a newer schema', () =>
    withFile(async (path) => {
      await openSqliteFrontier({ path }).close();
      const raw = new Database(path);
      raw.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run();
      raw.close();
      assert.throws(() => openSqliteFrontier({ path }), { code: 'FRONTIER_SCHEMA', retriable: false });
    }));

  it('reports a file that is not a database as corrupt', () =>
    withFile(async (path) => {
      writeFileSync(path, 'this is not a sqlite file, just some text that is long enough'.repeat(100));
      assert.throws(() => openSqliteFrontier({ path }), { code: 'FRONTIER_CORRUPT', retriable: false });
    }));

  it('wraps an unopenable path in a non-retriable FRONTIER_ACCESS StorageError', () =>
    withFile(async (path) => {
      assert.throws(() => openSqliteFrontier({ path: join(path, 'missing-dir', 'f.db') }), {
        name: 'StorageError',
        code: 'FRONTIER_ACCESS',
        retriable: false,
      });
    }));

  it('close is idempotent and later calls reject with FRONTIER_CLOSED', () =>
    withFile(async (path) => {
      const frontier = openSqliteFrontier({ path });
      await frontier.close();
      await frontier.close();
      await assert.rejects(frontier.push([task('https://a.test/')]), { code: 'FRONTIER_CLOSED' });
      await assert.rejects(frontier.stats(), { code: 'FRONTIER_CLOSED' });
    }));

  it('rejects invalid tasks with a typed error and keeps the frontier usable', () =>
    withFile(async (path) => {
      const frontier = openSqliteFrontier({ path });
      const bad = { ...task('https://a.test/'), priority: Number.NaN };
      await assert.rejects(frontier.push([task('https://a.test/ok'), bad]), {
        code: 'FRONTIER_BAD_TASK',
        retriable: false,
      });
      assert.equal((await frontier.stats()).total, 0);
      assert.equal((await frontier.push([task('https://a.test/ok')])).length, 1);
      await frontier.close();
    }));

  it('uses the partial indexes for lease and stats', () =>
    withFile(async (path) => {
      await openSqliteFrontier({ path }).close();
      const raw = new Database(path, { readonly: true });
      const plan = (sql: string): string =>
        raw
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all()
          .map((r) => r.detail)
          .join(' | ');
      assert.match(
        plan(`SELECT id FROM tasks WHERE state = 0 AND level = 3 AND available_at <= 1
                AND host NOT IN (SELECT value FROM json_each('[]'))
                AND run_id NOT IN (SELECT value FROM json_each('[]'))
              ORDER BY id LIMIT 10`),
        /USING COVERING INDEX tasks_ready|USING INDEX tasks_ready/,
      );
      assert.match(plan('SELECT COUNT(*) FROM tasks WHERE state = 0 AND available_at > 1'), /tasks_delayed/);
      assert.match(plan('SELECT COUNT(*) FROM tasks WHERE state = 1 AND lease_expires <= 1'), /tasks_leased/);
      assert.match(
        plan("SELECT COUNT(*) FROM tasks WHERE state = 0 AND available_at > 1 AND +run_id = 'r'"),
        /tasks_delayed/,
      );
      raw.close();
    }));
  it('migrates a file of the layout before runs (schema 2) into run default, levels from priorities', () =>
    withFile(async (path) => {
      // The file as the version before runs wrote it: schema 2, a seed (priority 0), a link (-1),
      // one done, and the checkpoint.
      const old = new Database(path);
      old.exec(`
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE tasks (
          id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, host TEXT NOT NULL, depth INTEGER NOT NULL,
          priority INTEGER NOT NULL, parent_url TEXT, state INTEGER NOT NULL, attempt INTEGER NOT NULL,
          available_at INTEGER NOT NULL, lease_id TEXT, lease_expires INTEGER, last_error TEXT,
          created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, kind TEXT, lastmod TEXT);
        INSERT INTO tasks (url, host, depth, priority, parent_url, state, attempt, available_at, created_at, updated_at)
          VALUES ('https://a.test/', 'a.test', 0, 0, NULL, 2, 1, 0, 0, 0),
                 ('https://a.test/link', 'a.test', 1, -1, 'https://a.test/', 0, 2, 0, 0, 0);
        INSERT INTO meta VALUES ('schema_version', '2'), ('checkpoint', 'cp-old');`);
      old.close();
      const frontier = openSqliteFrontier({ path });
      try {
        assert.deepEqual(await frontier.runs(), [{ runId: 'default', state: 'active' }]);
        const s = await frontier.stats('default');
        assert.deepEqual([s.total, s.done, s.ready], [2, 1, 1]);
        assert.equal(await frontier.checkpoint(), 'cp-old');
        assert.deepEqual(await frontier.push([task('https://a.test/link')]), [], 'the seen-set came along');
        const [lease] = await frontier.lease(1);
        assert.deepEqual(
          [lease?.runId, lease?.url, lease?.priority, lease?.attempt],
          ['default', 'https://a.test/link', 2, 2],
        );
        // The same URL in another run is a new task.
        assert.equal((await frontier.push([task('https://a.test/link', { runId: 'r2' })])).length, 1);
      } finally {
        await frontier.close();
      }
    }));

  it("deletes a retired run's tasks in the background once none is leased, keeping its counters", () =>
    withFile(async (path, clock) => {
      const rows = (runId: string): number => taskRows(path, runId);
      const frontier = openSqliteFrontier({ path, clock: clock.fn, sweepRetired: silentLogger() });
      await frontier.push([
        ...tasks('https://o.test/', 30, { runId: 'over' }),
        ...tasks('https://c.test/', 3, { runId: 'gone' }),
        task('https://l.test/1', { runId: 'live' }),
      ]);
      const leases = await frontier.lease(100);
      const of = (runId: string) => leases.filter((l) => l.runId === runId);
      await frontier.settle({ acks: of('over').map((l) => ({ lease: ref(l) })), retries: [], failures: [] });
      await frontier.retireRun('over');
      await waitFor(() => rows('over') === 0, {
        timeoutMs: 5_000,
        message: "the finished run's tasks deleted",
      });
      assert.deepEqual(
        [(await frontier.stats('over')).total, (await frontier.stats('over')).done],
        [30, 30],
        'its counters kept',
      );

      // A cancelled run with a lease out: its tasks stay until the lease's outcome is in.
      const [out, ...back] = of('gone');
      assert.ok(out);
      await frontier.release(back.map(ref));
      await frontier.cancelRun('gone');
      await frontier.retireRun('gone');
      const waitUntil = Date.now() + 1_500;
      await waitFor(() => Date.now() >= waitUntil || rows('gone') < 3, { timeoutMs: 5_000 });
      assert.equal(rows('gone'), 3, 'kept while a lease of it is out');
      await frontier.settle({ acks: [{ lease: ref(out) }], retries: [], failures: [] });
      await waitFor(() => rows('gone') === 0, {
        timeoutMs: 5_000,
        message: "the cancelled run's tasks deleted",
      });
      const gone = await frontier.stats('gone');
      assert.deepEqual([gone.total, gone.done, gone.cancelled, gone.leased], [3, 1, 2, 0]);
      assert.equal(rows('live'), 1, "the live run's task kept");
      await frontier.close();

      const again = openSqliteFrontier({ path, clock: clock.fn });
      try {
        assert.deepEqual(
          (await again.runs()).map((r) => r.runId),
          ['live'],
        );
        const over = await again.stats('over');
        assert.deepEqual([over.total, over.done], [30, 30], 'counters kept across a restart');
        const g = await again.stats('gone');
        assert.deepEqual([g.total, g.done, g.cancelled], [3, 1, 2]);
      } finally {
        await again.close();
      }
    }));

  it('a retired run whose tasks were not all deleted is swept at the next open', () =>
    withFile(async (path, clock) => {
      const first = openSqliteFrontier({ path, clock: clock.fn });
      await first.push(tasks('https://o.test/', 10, { runId: 'over' }));
      await first.retireRun('over');
      await first.close();
      assert.equal(taskRows(path, 'over'), 10, 'without sweepRetired nothing is deleted');
      const second = openSqliteFrontier({ path, clock: clock.fn, sweepRetired: silentLogger() });
      try {
        await waitFor(() => taskRows(path, 'over') === 0, {
          timeoutMs: 5_000,
          message: 'swept after the open',
        });
        assert.equal((await second.stats('over')).total, 10);
      } finally {
        await second.close();
      }
    }));

  it('migrates a file of schema 3 (no retired runs) in place', () =>
    withFile(async (path, clock) => {
      const first = openSqliteFrontier({ path, clock: clock.fn });
      await first.push(tasks('https://a.test/', 2, { runId: 'r' }));
      await first.close();
      const db = new Database(path);
      db.exec(`ALTER TABLE runs DROP COLUMN final_counts; ALTER TABLE runs DROP COLUMN retired;
        UPDATE meta SET value = '3' WHERE key = 'schema_version';`);
      db.close();
      const again = openSqliteFrontier({ path, clock: clock.fn });
      try {
        assert.deepEqual(await again.runs(), [{ runId: 'r', state: 'active' }]);
        assert.equal((await again.stats('r')).ready, 2);
        await again.retireRun('r');
        assert.deepEqual(await again.runs(), []);
      } finally {
        await again.close();
      }
    }));
});
