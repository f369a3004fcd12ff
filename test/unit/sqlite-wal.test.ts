import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { enterWalMode } from '../../shared/adapters/sqlite-wal.js';

/** A connection whose `journal_mode` pragma throws each of `failures` in turn, then succeeds. */
function connection(failures: readonly string[]): { pragma(source: string): unknown; calls: number } {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    pragma(source: string) {
      assert.equal(source, 'journal_mode = WAL');
      const code = failures[calls];
      calls += 1;
      if (code !== undefined) throw Object.assign(new Error(`failure ${calls}`), { code });
      return [{ journal_mode: 'wal' }];
    },
  };
}

describe('enterWalMode', () => {
  it('retries while another connection holds the lock it needs, then switches', () => {
    const db = connection(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY']);
    enterWalMode(db, 5_000);
    assert.equal(db.calls, 4);
  });

  it('gives up with the busy error once its wait is spent', () => {
    const db = connection(Array.from({ length: 1_000 }, () => 'SQLITE_BUSY'));
    const started = Date.now();
    assert.throws(() => enterWalMode(db, 60), { code: 'SQLITE_BUSY' });
    const waited = Date.now() - started;
    assert.ok(waited >= 20 && waited < 1_000, `waited ${waited} ms`);
    assert.ok(db.calls > 1 && db.calls < 20, `${db.calls} calls`);
  });

  it('does not retry any other failure', () => {
    const db = connection(['SQLITE_IOERR_WRITE']);
    assert.throws(() => enterWalMode(db, 5_000), { code: 'SQLITE_IOERR_WRITE' });
    assert.equal(db.calls, 1);
  });

  it('puts a real new file in WAL mode', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-wal-'));
    const db = new Database(join(dir, 'x.db'));
    try {
      enterWalMode(db, 1_000);
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
