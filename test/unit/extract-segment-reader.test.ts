import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { listSegments, segmentName } from '../../shared/adapters/page-sink/segments.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { BatchCleaner } from '../../master/extract/batch-cleaner.js';
import { SegmentExtractReader } from '../../master/extract/segment-extract-reader.js';
import { pageRecordOf } from '../../scripts/bench/extract/page-records.js';
import { waitFor } from '../helpers/wait-for.js';

const article = (i: number): Buffer =>
  Buffer.from(
    `<html lang="en"><head><title>Page ${i}</title></head><body><article>${Array.from(
      { length: 6 },
      (_, p) =>
        `<p>Paragraph ${p} of page ${i}: the reader follows segments in order, and its position is durable.</p>`,
    ).join('')}</article></body></html>`,
  );

const recordOf = (i: number): PageRecord =>
  pageRecordOf({ url: `http://127.0.0.1/p/${i}`, html: article(i), runId: 'run-seg', captureId: `cap-${i}` });

async function rowCount(store: SqlStore): Promise<number> {
  return (await store.results.list('run-seg', { limit: 500 })).items.length;
}

describe('the record-file reader (file sink segments, plain and gzip)', () => {
  let dir: string;
  let store: SqlStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-seg-'));
    store = await openSqlStore(`sqlite:${join(dir, 'store.db')}`);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const reader = (
    out: string,
    follow: boolean,
    target: Pick<SqlStore, 'results' | 'extractFailures'> = store,
  ) => {
    const positionFile = join(out, '.extract-position.json');
    const cleaner = new BatchCleaner({
      store: target,
      logger: silentLogger(),
      options: { blobStore: null, maxHtmlChars: 1e7, maxElements: 60_000, now: () => 1 },
    });
    return {
      cleaner,
      reader: new SegmentExtractReader({
        dir: out,
        positionFile,
        cleaner,
        logger: silentLogger(),
        chunkRecords: 4,
        follow,
        pollMs: 20,
        now: () => 1,
      }),
    };
  };

  test('reads rotated gzip segments and the open plain one; a torn tail waits until complete', async () => {
    const out = join(dir, 'out');
    const sink = new FileSink({ dir: out, segmentBytes: 4 * 1024, gzip: true });
    for (let i = 0; i < 30; i += 3) {
      await sink.write(
        [0, 1, 2].map((k) => ({ key: '', value: Buffer.from(JSON.stringify(recordOf(i + k))) })),
      );
    }
    await waitFor(() => readdirSync(out).some((f) => f.endsWith('.jsonl.gz')), { message: 'a gzip segment' });
    const segments = listSegments(out);
    assert.ok(segments.length >= 3, `${segments.length} segments`);
    // A write in progress at the end of the open segment: not a record yet.
    const last = segments.at(-1);
    assert.ok(last && !last.gzip);
    const torn = JSON.stringify(recordOf(99));
    appendFileSync(last.path, torn.slice(0, 100));

    const first = reader(out, false);
    await first.reader.run();
    assert.equal(await rowCount(store), 30);
    assert.equal(first.cleaner.counts.failures, 0);

    appendFileSync(last.path, `${torn.slice(100)}\n`);
    const again = reader(out, false);
    await again.reader.run();
    assert.equal(await rowCount(store), 31, 'the completed line is read, nothing before it again');
    assert.equal(again.cleaner.counts.results, 1);
    await sink.close();
  });

  test('following: records written later are cleaned; stop() ends it after the chunk in hand', async () => {
    const out = join(dir, 'follow');
    const sink = new FileSink({ dir: out, segmentBytes: 8 * 1024 });
    await sink.write([{ key: '', value: Buffer.from(JSON.stringify(recordOf(100))) }]);
    const { reader: r } = reader(out, true);
    const running = r.run();
    await waitFor(async () => (await rowCount(store)) === 32, { message: 'the first record' });
    for (let i = 101; i < 111; i += 1)
      await sink.write([{ key: '', value: Buffer.from(JSON.stringify(recordOf(i))) }]);
    await waitFor(async () => (await rowCount(store)) === 42, {
      timeoutMs: 20_000,
      message: 'records written later',
    });
    r.stop();
    await running;
    assert.deepEqual(r.at.index, listSegments(out).at(-1)?.index);
    await sink.close();
  });

  test('stopped after a chunk and started again: every record once, at most one chunk read twice', async () => {
    const out = join(dir, 'resume');
    const sink = new FileSink({ dir: out, segmentBytes: 6 * 1024 });
    for (let i = 200; i < 220; i += 1)
      await sink.write([{ key: '', value: Buffer.from(JSON.stringify(recordOf(i))) }]);
    await sink.close();
    const before = await rowCount(store);
    let calls = 0;
    let stop = (): void => undefined;
    // The reader stops during its second chunk: that chunk still commits, and its position with it.
    const stopping = {
      extractFailures: store.extractFailures,
      results: {
        ...store.results,
        upsert: async (rows: Parameters<SqlStore['results']['upsert']>[0]) => {
          calls += 1;
          if (calls === 2) stop();
          return store.results.upsert(rows);
        },
      },
    };
    const first = reader(out, false, stopping);
    stop = () => first.reader.stop();
    await first.reader.run();
    const partial = (await rowCount(store)) - before;
    assert.ok(partial > 1 && partial < 20, `two chunks committed: ${partial}`);
    assert.equal(calls, 2);
    const second = reader(out, false);
    await second.reader.run();
    assert.equal((await rowCount(store)) - before, 20);
    assert.equal(second.cleaner.counts.results, 20 - partial, 'nothing committed was read again');
  });

  test('a segment gzipped by the sink while it is being read is read on from its .gz, not a crash', async () => {
    const out = join(dir, 'out-rotating');
    mkdirSync(out);
    const lines = (from: number, n: number): string =>
      Array.from({ length: n }, (_, k) => `${JSON.stringify(recordOf(from + k))}\n`).join('');
    const plain1 = join(out, segmentName(1, false));
    writeFileSync(plain1, lines(300, 3));
    writeFileSync(join(out, segmentName(2, false)), lines(303, 1));
    const before = await rowCount(store);
    let rotated = false;
    // The sink's rotation lands just after the reader's first chunk of segment 1: the plain file
    // becomes .gz, and the reader's second look at segment 1 must find it there.
    const rotating = {
      extractFailures: store.extractFailures,
      results: {
        ...store.results,
        upsert: async (rows: Parameters<SqlStore['results']['upsert']>[0]) => {
          const done = await store.results.upsert(rows);
          if (!rotated) {
            rotated = true;
            writeFileSync(join(out, segmentName(1, true)), gzipSync(readFileSync(plain1)));
            unlinkSync(plain1);
          }
          return done;
        },
      },
    };
    await reader(out, false, rotating).reader.run();
    assert.equal(rotated, true);
    assert.equal((await rowCount(store)) - before, 4, 'every record once, none lost at the rotation');
  });
});
