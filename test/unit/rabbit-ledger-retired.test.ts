import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../../shared/adapters/frontier/rabbitmq/ledger.js';
import { RunSweeper } from '../../shared/adapters/frontier/run-sweeper.js';
import { silentLogger, type Logger } from '../../shared/logger.js';

/** A task of `runId` for `url`, as the frontier hands it to the ledger. */
const task = (runId: string, url: string) => ({
  runId,
  url,
  host: 'a.test',
  depth: 0,
  priority: 0,
  parentUrl: null,
});

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

test("the URL rows of a retired run, once its queues are gone, are swept when no delivery of it is held; its counters and other runs' rows stay", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-ledger-sweep-'));
  try {
    const path = join(dir, 'ledger.db');
    const ledger = new Ledger(path);
    const urls = (runId: string, n: number) =>
      Array.from({ length: n }, (_, i) => task(runId, `https://a.test/${runId}/${i}`));
    ledger.record({ accepted: [...urls('done1', 25), ...urls('cancelled', 7), ...urls('live', 5)] });
    ledger.record({ done: urls('done1', 25).map(({ runId, url }) => ({ runId, url })) });
    const rows = (runId: string): number => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM urls WHERE run_id = ?').get(runId) as { n: number }).n;
      } finally {
        db.close();
      }
    };

    ledger.markRetired('done1');
    assert.deepEqual(ledger.runsToSweep(), [], 'retired but its queues still there: kept');
    assert.equal(ledger.sweepRows('done1', 10), 0, 'refused before its queues are deleted');
    assert.equal(ledger.sweepRows('live', 10), 0, 'refused for a run still served');
    ledger.markPurged('done1');
    ledger.setState('cancelled', 'cancelled');
    ledger.markPurged('cancelled');
    assert.deepEqual(ledger.runsToSweep(), ['done1'], 'a cancelled run keeps its rows (late outcomes)');
    assert.equal(ledger.sweepRows('cancelled', 10), 0);

    let held = true;
    const sweeper = new RunSweeper({
      rows: ledger,
      holds: () => held,
      logger: silentLogger(),
      sliceRows: 10,
      pauseMs: 1,
      heldRetryMs: 5,
    });
    sweeper.add('done1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(rows('done1'), 25, 'nothing swept while a delivery of the run is held');
    held = false;
    const deadline = Date.now() + 5_000;
    while (ledger.runsToSweep().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await sweeper.close();

    assert.deepEqual(ledger.runsToSweep(), []);
    assert.deepEqual([rows('done1'), rows('cancelled'), rows('live')], [0, 7, 5]);
    assert.deepEqual(ledger.counts('done1'), { total: 25, done: 25, failed: 0 }, 'counters kept');
    assert.deepEqual(
      ledger.unseen([task('done1', 'https://a.test/done1/0'), task('done1', 'https://a.test/new')], () => 100)
        .fresh,
      [],
      'a retired run takes no discoveries, seen before or not',
    );
    ledger.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the sweeper stops at close between two slices, and a failed slice leaves its run for the next start', async () => {
  const calls: string[] = [];
  const ledger = {
    sweepRows(runId: string, limit: number): number {
      calls.push(runId);
      if (runId === 'broken') throw new Error('disk I/O error');
      return limit;
    },
    releaseFreePages: () => 0,
  };
  const logged: unknown[] = [];
  const logger = { ...silentLogger(), warn: (o: unknown) => void logged.push(o) } as unknown as Logger;
  const sweeper = new RunSweeper({
    rows: ledger,
    holds: () => false,
    logger,
    sliceRows: 10,
    pauseMs: 10_000,
  });
  sweeper.add('broken');
  sweeper.add('endless');
  const started = Date.now();
  while (!calls.includes('endless') && Date.now() - started < 5_000)
    await new Promise((resolve) => setTimeout(resolve, 2));
  await sweeper.close();
  assert.ok(Date.now() - started < 5_000, 'close did not wait out the pause');
  assert.deepEqual(
    calls,
    ['broken', 'endless'],
    'one slice each: the broken run given up, the other stopped by close',
  );
  assert.equal(logged.length, 1);
});

test('a swept run gives its space back: the ledger file shrinks; a ledger made without incremental vacuum keeps its size', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-ledger-shrink-'));
  try {
    const sizeAfterClose = (path: string): number => statSync(path).size;
    const urls = (runId: string, n: number) =>
      Array.from({ length: n }, (_, i) => task(runId, `https://a.test/${runId}/${i}/${'p'.repeat(60)}`));
    const sweepAll = async (ledger: Ledger, untilNoFreePages: boolean): Promise<void> => {
      const sweeper = new RunSweeper({
        rows: ledger,
        holds: () => false,
        logger: silentLogger(),
        sliceRows: 5_000,
        slicePages: 100,
        pauseMs: 1,
      });
      for (const runId of ledger.runsToSweep()) sweeper.add(runId);
      const deadline = Date.now() + 10_000;
      while (
        (ledger.runsToSweep().length > 0 || (untilNoFreePages && ledger.freePages() > 0)) &&
        Date.now() < deadline
      )
        await new Promise((resolve) => setTimeout(resolve, 5));
      await sweeper.close();
    };

    // A ledger made now: 20,000 URL rows of a finished run, 50 of a live one.
    const path = join(dir, 'ledger.db');
    const ledger = new Ledger(path);
    ledger.record({ accepted: [...urls('big', 20_000), ...urls('live', 50)] });
    ledger.close();
    const full = sizeAfterClose(path);
    const again = new Ledger(path);
    again.markRetired('big');
    again.markPurged('big');
    assert.equal(again.freePages(), 0);
    await sweepAll(again, true);
    assert.equal(again.freePages(), 0, 'every freed page given back');
    assert.equal(again.unseen(urls('live', 50), () => 100).fresh.length, 0, "the live run's rows kept");
    again.close();
    const shrunk = sizeAfterClose(path);
    console.log(
      `# ledger of 20,050 URL rows: ${full} bytes; after its finished run was swept: ${shrunk} bytes`,
    );
    assert.ok(full > 1_000_000, `the full ledger is large (${full} bytes)`);
    assert.ok(shrunk < full / 10, `the file shrank from ${full} to ${shrunk} bytes`);

    // A ledger made before auto_vacuum was set (NONE): swept alike, its size kept, nothing fails.
    const oldPath = join(dir, 'old-ledger.db');
    const old = new Database(oldPath);
    old.exec('CREATE TABLE placeholder (x INTEGER)');
    old.close();
    const older = new Ledger(oldPath);
    older.record({ accepted: urls('big', 5_000) });
    older.markRetired('big');
    older.markPurged('big');
    assert.equal(older.releaseFreePages(100), 0, 'no incremental vacuum on it');
    await sweepAll(older, false);
    assert.ok(older.freePages() > 0, 'its freed pages stay in the file, for reuse');
    assert.deepEqual(older.runsToSweep(), [], 'its rows swept');
    older.close();
    assert.ok(sizeAfterClose(oldPath) > 200_000, 'its size kept (free pages are reused)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
