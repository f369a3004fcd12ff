import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../../shared/adapters/frontier/rabbitmq/ledger.js';

test('the ledger keeps a run retired across a reopen, out of runs(), and opens a ledger written before runs could retire', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-ledger-retired-'));
  try {
    const path = join(dir, 'ledger.db');
    // A version-2 ledger as written before the `retired` column: one run, done.
    const old = new Database(path);
    old.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO meta VALUES ('kind', 'ackcrawl-rabbitmq-ledger'), ('ledger_version', '2');
      CREATE TABLE urls (run_id TEXT NOT NULL, url TEXT NOT NULL, state INTEGER NOT NULL,
        attempt INTEGER NOT NULL, PRIMARY KEY (run_id, url)) WITHOUT ROWID;
      CREATE TABLE runs (run_id TEXT PRIMARY KEY, state INTEGER NOT NULL, total INTEGER NOT NULL,
        done INTEGER NOT NULL, failed INTEGER NOT NULL, purged INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO runs VALUES ('r1', 0, 3, 2, 1, 0), ('r2', 0, 1, 0, 0, 0);
    `);
    old.close();

    const ledger = new Ledger(path);
    assert.deepEqual(
      ledger.runs().map((r) => [r.runId, r.retired, r.total]),
      [
        ['r1', false, 3],
        ['r2', false, 1],
      ],
    );
    ledger.markRetired('r1');
    assert.equal(ledger.run('r1')?.retired, true);
    ledger.close();

    const again = new Ledger(path);
    try {
      const r1 = again.run('r1');
      assert.deepEqual([r1?.retired, r1?.purged, r1?.done], [true, false, 2], 'retired, counters kept');
      assert.deepEqual(
        again.runs().map((r) => r.runId),
        ['r2'],
        'the runs the frontier goes through leave it out',
      );
      assert.deepEqual(
        again.retiredUndeleted().map((r) => r.runId),
        ['r1'],
      );
      again.markPurged('r1');
      assert.deepEqual(again.retiredUndeleted(), []);
    } finally {
      again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a write that rolls back leaves the counters of the runs it touched as they were, and no run it added', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-ledger-rollback-'));
  try {
    const path = join(dir, 'ledger.db');
    const ledger = new Ledger(path);
    try {
      const task = (runId: string, url: string) => ({
        runId,
        url,
        host: 'a.test',
        depth: 0,
        priority: 0,
        parentUrl: null,
      });
      ledger.record({ accepted: [task('r1', 'https://a.test/1'), task('r1', 'https://a.test/2')] });
      ledger.record({ accepted: [task('r2', 'https://a.test/1')] });
      // The last statement of a write fails: everything before it in the transaction rolls back.
      const other = new Database(path);
      other.exec(
        "CREATE TRIGGER boom BEFORE INSERT ON meta WHEN NEW.value = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
      );
      other.close();
      assert.throws(() =>
        ledger.record({
          done: [{ runId: 'r1', url: 'https://a.test/1' }],
          accepted: [task('r3', 'https://a.test/1')],
          checkpoint: 'boom',
        }),
      );
      assert.deepEqual(
        ledger.runs().map((r) => [r.runId, r.total, r.done]),
        [
          ['r1', 2, 0],
          ['r2', 1, 0],
        ],
      );
      ledger.record({ done: [{ runId: 'r1', url: 'https://a.test/1' }], checkpoint: 'fine' });
      assert.deepEqual(ledger.counts('r1'), { total: 2, done: 1, failed: 0 });
    } finally {
      ledger.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
