import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import type { LogRow, SqlStore } from '../../shared/ports/sql-store.js';
import { BatchedWriter } from '../../shared/sql/batched-writer.js';
import { createSqlLogWriter, logRowBytes } from '../../shared/sql/log-writer.js';
import { waitFor } from '../helpers/wait-for.js';

const row = (i: number, fields: Partial<LogRow> = {}): LogRow => ({
  runId: 'run',
  url: `http://127.0.0.1/${i}`,
  code: 'TIMEOUT',
  attempts: 3,
  lastError: `failure ${i}`,
  final: true,
  at: i,
  ...fields,
});

/** Every row of the run, in id order. */
async function stored(store: SqlStore): Promise<LogRow[]> {
  return (await store.logs.list('run', { limit: 500 })).items.map(
    ({ id: _id, retriedAt: _r, requeuedAt: _q, ...r }) => r,
  );
}

function captureLogs(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('batched writer (against the SQLite store)', () => {
  let dir: string;
  let path: string;
  let store: SqlStore;
  let appends: number[];
  let counted: Pick<SqlStore, 'logs'>;
  const writers: BatchedWriter<LogRow>[] = [];
  let locker: Database.Database | null = null;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-writer-'));
    path = join(dir, 'ackcrawl.db');
    store = await openSqlStore(path, { busyTimeoutMs: 20 });
    appends = [];
    // The real store, with each append's batch size noted.
    counted = {
      logs: {
        append: (rows) => {
          appends.push(rows.length);
          return store.logs.append(rows);
        },
        list: (runId, q) => store.logs.list(runId, q),
        get: (id) => store.logs.get(id),
        ofUrl: (runId, url, limit) => store.logs.ofUrl(runId, url, limit),
        markRetried: (id, at) => store.logs.markRetried(id, at),
        retriesToQueue: (runId, limit) => store.logs.retriesToQueue(runId, limit),
        markRequeued: (id, at) => store.logs.markRequeued(id, at),
        countSince: (at) => store.logs.countSince(at),
      },
    };
  });

  afterEach(async () => {
    locker?.close();
    locker = null;
    await Promise.all(writers.splice(0).map((w) => w.close(100)));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const writer = (options: Parameters<typeof createSqlLogWriter>[1] = {}): BatchedWriter<LogRow> => {
    const w = createSqlLogWriter(counted, { retryMinMs: 10, retryMaxMs: 40, ...options });
    writers.push(w);
    return w;
  };

  /** Another process's write lock: the store's writes fail with SQL_BUSY until released. */
  const lockDatabase = (): void => {
    locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
  };
  const unlockDatabase = (): void => {
    locker?.exec('ROLLBACK');
    locker?.close();
    locker = null;
  };

  it('writes a full batch at once, in one append per batch, and the rest after the interval', async () => {
    const w = writer({ batchRows: 10, intervalMs: 1_000 });
    const started = Date.now();
    for (let i = 0; i < 25; i += 1) w.add(row(i));
    await waitFor(() => w.stats().written >= 20, { timeoutMs: 2_000 });
    assert.ok(Date.now() - started < 1_000, 'full batches do not wait for the interval');
    assert.deepEqual(appends.slice(0, 2), [10, 10]);
    await waitFor(() => w.stats().written === 25, { timeoutMs: 3_000 });
    assert.ok(Date.now() - started >= 990, 'the part batch waited for its interval');
    assert.deepEqual(appends, [10, 10, 5]);
    assert.deepEqual(
      await stored(store),
      Array.from({ length: 25 }, (_, i) => row(i)),
    );
  });

  it('add() returns at once and never throws, even while the database is down', async () => {
    lockDatabase();
    const w = writer({ batchRows: 5, intervalMs: 5 });
    const t0 = performance.now();
    for (let i = 0; i < 20; i += 1) w.add(row(i));
    assert.ok(performance.now() - t0 < 50, 'add does no SQL');
    await waitFor(() => w.stats().failedAttempts >= 3, { timeoutMs: 5_000 });
    assert.equal(w.stats().written, 0);
    assert.equal(w.stats().pending, 20);
    unlockDatabase();
    await waitFor(() => w.stats().written === 20, { timeoutMs: 5_000 });
    assert.deepEqual(
      await stored(store),
      Array.from({ length: 20 }, (_, i) => row(i)),
      'nothing lost or doubled, in order',
    );
    assert.equal(w.stats().dropped, 0);
  });

  it('past its bound it drops the oldest rows, counting them and logging at most once per interval', async () => {
    let now = 1_000_000;
    const { logger, lines } = captureLogs();
    lockDatabase();
    const w = writer({
      batchRows: 10,
      intervalMs: 5,
      maxRows: 100,
      logIntervalMs: 10_000,
      logger,
      now: () => now,
    });
    for (let i = 0; i < 250; i += 1) w.add(row(i));
    assert.equal(w.stats().pending, 100);
    assert.equal(w.stats().dropped, 150);
    const dropLogs = (): Record<string, unknown>[] => lines.filter((l) => typeof l.dropped === 'number');
    assert.equal(dropLogs().length, 1, 'one line for the burst');
    for (let i = 250; i < 260; i += 1) w.add(row(i));
    assert.equal(dropLogs().length, 1, 'rate-limited');
    now += 10_000;
    w.add(row(260));
    assert.equal(dropLogs().length, 2);
    assert.equal(dropLogs()[1]?.droppedTotal, 161);
    assert.deepEqual(
      dropLogs().map((l) => l.dropped),
      [1, 160],
      'the first drop is logged at once; the lines add up to every drop',
    );
    await waitFor(() => w.stats().failedAttempts >= 1, { timeoutMs: 5_000 });
    unlockDatabase();
    await waitFor(() => w.stats().written === 100, { timeoutMs: 5_000 });
    assert.deepEqual(
      (await stored(store)).map((r) => r.at),
      [...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 90 }, (_, i) => 171 + i)],
      'the batch that was being written when the bound was hit is kept; of the waiting rows the newest survive',
    );
  });

  it('bounds bytes as well as rows', () => {
    lockDatabase();
    const big = (i: number): LogRow => row(i, { lastError: 'e'.repeat(10_000) });
    const w = writer({ intervalMs: 60_000, maxBytes: 5 * logRowBytes(big(0)) + 10 });
    for (let i = 0; i < 12; i += 1) w.add(big(i));
    assert.equal(w.stats().pending, 5);
    assert.ok(w.stats().pendingBytes <= 5 * logRowBytes(big(0)) + 10);
    assert.equal(w.stats().dropped, 7);
  });

  it('close() writes what waits at once, and is safe to call twice', async () => {
    const w = writer({ batchRows: 1_000, intervalMs: 60_000 });
    for (let i = 0; i < 7; i += 1) w.add(row(i));
    const t0 = Date.now();
    const stats = await w.close(2_000);
    assert.ok(Date.now() - t0 < 1_000);
    assert.equal(stats.written, 7);
    assert.equal(stats.pending, 0);
    assert.equal((await stored(store)).length, 7);
    assert.equal((await w.close()).written, 7);
    w.add(row(99));
    assert.equal(w.stats().dropped, 1, 'a row after close is dropped, counted');
  });

  it('close() gives up at its deadline while the database stays down, counting what is lost', async () => {
    lockDatabase();
    const w = writer({ batchRows: 5, intervalMs: 5, retryMinMs: 50, retryMaxMs: 50 });
    for (let i = 0; i < 12; i += 1) w.add(row(i));
    const t0 = Date.now();
    const stats = await w.close(300);
    const took = Date.now() - t0;
    assert.ok(took >= 250 && took < 2_000, `close took ${took} ms`);
    assert.equal(stats.written, 0);
    assert.equal(stats.dropped, 12);
    assert.equal(stats.pending, 0);
  });

  it('a batch the database refuses for good is retried row by row: only the bad row is lost', async () => {
    const { logger, lines } = captureLogs();
    const w = writer({ batchRows: 4, intervalMs: 5, logger });
    w.add(row(0));
    w.add(row(1, { code: 'X'.repeat(500) })); // longer than the code column: SQL_INVALID_VALUE
    w.add(row(2));
    w.add(row(3));
    await waitFor(() => w.stats().written === 3, { timeoutMs: 3_000 });
    assert.equal(w.stats().rejected, 1);
    assert.deepEqual(
      (await stored(store)).map((r) => r.at),
      [0, 2, 3],
    );
    assert.ok(lines.some((l) => l.level === 50 && String(l.msg).includes('refused a row')));
  });
});
