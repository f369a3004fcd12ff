import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../../shared/adapters/frontier/rabbitmq/ledger.js';

test('the ledger keeps a run retired across a reopen, and opens a ledger written before runs could retire', () => {
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
      assert.deepEqual(
        again.runs().map((r) => [r.runId, r.retired, r.purged, r.done]),
        [
          ['r1', true, false, 2],
          ['r2', false, false, 0],
        ],
      );
    } finally {
      again.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
