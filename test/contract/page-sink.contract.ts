import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { BlobStore } from '../../shared/ports/blob-store.js';
import { captureKey } from '../../shared/ports/blob-store.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import {
  PAGE_RECORD_SCHEMA,
  storedPageRecordSchema,
  type PageRecord,
  type StoredPageRecord,
} from '../../shared/protocol/page-record.js';

export interface PageSinkFixture {
  sink: PageSink;
  /**
   * Every record durably stored so far, read from the store itself (not from the sink), waiting
   * until at least `count` are there. Records of one key come back in the order they were stored.
   */
  readBack(count: number): Promise<SinkRecord[]>;
  /** Where the adapter moves large bodies (the claim check); null when it keeps them inline. */
  claimCheck: { blobStore: BlobStore; thresholdBytes: number } | null;
  cleanup(): Promise<void>;
}

export type MakePageSink = () => Promise<PageSinkFixture>;

/** A valid page record; `seq` goes into `depth` so tests can check order per key. */
export function pageRecord(url: string, seq: number, fields: Partial<PageRecord> = {}): PageRecord {
  const body = fields.body ?? `<p>${url} #${seq}</p>`;
  return {
    schema: PAGE_RECORD_SCHEMA,
    jobId: 'job-1',
    runId: 'run-1',
    captureId: `capture-${seq}`,
    url,
    finalUrl: url,
    status: 200,
    outcome: 'ok',
    error: null,
    contentType: 'text/html; charset=utf-8',
    depth: seq,
    parentUrl: null,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: { 'content-type': 'text/html; charset=utf-8' },
    fetchedAt: new Date(1_700_000_000_000 + seq).toISOString(),
    durationMs: 5,
    attempt: 1,
    crawlerId: 'contract',
    bodyBytes: Buffer.byteLength(body ?? ''),
    bodySha256: body === null ? null : sha256(Buffer.from(body, 'utf8')),
    bodyEncoding: body === null ? null : 'utf8',
    body,
    ...fields,
  };
}

export function sinkRecord(record: PageRecord): SinkRecord {
  return { key: record.url, value: Buffer.from(JSON.stringify(record)) };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function parse(record: SinkRecord): StoredPageRecord {
  return storedPageRecordSchema.parse(JSON.parse(record.value.toString('utf8')));
}

/** key → the `depth` (sequence) of its records, in stored order. */
function sequencesByKey(records: readonly SinkRecord[]): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  for (const r of records) {
    const parsed = parse(r);
    assert.equal(r.key, parsed.url, 'a record is stored under its URL');
    byKey.set(r.key, [...(byKey.get(r.key) ?? []), parsed.depth]);
  }
  return byKey;
}

/**
 * The PageSink port's contract (shared/ports/page-sink.ts), run over every adapter: a resolved
 * write is durable and readable back from the store, in order per key; large bodies go through
 * the claim check where the adapter has one; empty batches, close and writes after close behave
 * the same everywhere.
 */
export function pageSinkContract(name: string, makeSink: MakePageSink): void {
  const define = (title: string, body: (fx: PageSinkFixture) => Promise<void>): void => {
    it(title, async () => {
      const fx = await makeSink();
      try {
        await body(fx);
      } finally {
        await fx.sink.close().catch(() => undefined);
        await fx.cleanup();
      }
    });
  };

  describe(`${name}: page sink contract`, () => {
    define('a resolved write is durable and reads back in order per key', async ({ sink, readBack }) => {
      const urls = ['https://a.test/1', 'https://a.test/2', 'https://b.test/x', 'https://c.test/?q=1'];
      const written: SinkRecord[] = [];
      for (let batch = 0; batch < 3; batch += 1) {
        const records = Array.from({ length: 10 }, (_, i) =>
          sinkRecord(pageRecord(urls[i % urls.length] as string, batch * 10 + i)),
        );
        await sink.write(records);
        written.push(...records);
      }
      const stored = await readBack(written.length);
      assert.equal(stored.length, written.length);
      assert.deepEqual(sequencesByKey(stored), sequencesByKey(written));
      const bytes = (list: readonly SinkRecord[]): string[] =>
        list.map((r) => r.value.toString('hex')).sort();
      assert.deepEqual(bytes(stored), bytes(written), 'values are stored byte for byte');
    });

    define('concurrent writes keep their call order per key', async ({ sink, readBack }) => {
      const first = Array.from({ length: 5 }, (_, i) => sinkRecord(pageRecord('https://a.test/same', i)));
      const second = Array.from({ length: 5 }, (_, i) =>
        sinkRecord(pageRecord('https://a.test/same', 5 + i)),
      );
      await Promise.all([sink.write(first), sink.write(second)]);
      const stored = await readBack(10);
      assert.deepEqual(sequencesByKey(stored).get('https://a.test/same'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    define('an empty batch resolves and stores nothing', async ({ sink, readBack }) => {
      await sink.write([]);
      await sink.write([sinkRecord(pageRecord('https://a.test/only', 1))]);
      await sink.write([]);
      const stored = await readBack(1);
      assert.deepEqual(
        stored.map((r) => r.key),
        ['https://a.test/only'],
      );
    });

    define('a record under the threshold keeps its body inline', async ({ sink, readBack }) => {
      const record = pageRecord('https://a.test/small', 1, { body: 'é'.repeat(10_000) });
      await sink.write([sinkRecord(record)]);
      const [stored] = await readBack(1);
      assert.ok(stored);
      const parsed = parse(stored);
      assert.equal(parsed.body, record.body);
      assert.equal(parsed.bodyRef ?? null, null);
    });

    define('a large text body goes through the claim check', async ({ sink, readBack, claimCheck }) => {
      // Multi-byte characters: the blob holds UTF-8 bytes, and the threshold is in bytes too.
      const body = `<html>${'ü€'.repeat(120_000)}</html>`;
      const record = pageRecord('https://a.test/large', 1, { body });
      const value = sinkRecord(record);
      assert.ok(value.value.length > 512 * 1024);
      await sink.write([value]);
      const [stored] = await readBack(1);
      assert.ok(stored);
      const parsed = parse(stored);
      if (!claimCheck) {
        assert.deepEqual(stored.value, value.value, 'kept inline, unchanged');
        return;
      }
      const bytes = Buffer.from(body, 'utf8');
      assert.equal(parsed.body, null);
      assert.deepEqual(parsed.bodyRef, {
        store: claimCheck.blobStore.location.store,
        bucket: claimCheck.blobStore.location.bucket,
        key: captureKey({ jobId: 'job-1', runId: 'run-1', captureId: 'capture-1', part: 'body' }),
        sha256: sha256(bytes),
        bytes: bytes.length,
      });
      assert.equal(parsed.bodySha256, sha256(bytes), 'bodyRef.sha256 matches the fetched body');
      const blob = await claimCheck.blobStore.get(parsed.bodyRef?.key ?? '');
      assert.equal(sha256(blob), parsed.bodyRef?.sha256);
      assert.equal(blob.toString('utf8'), body);
      // Everything else in the record is as written.
      assert.deepEqual({ ...parsed, body, bodyRef: undefined }, { ...record, bodyRef: undefined });
    });

    define('a large binary body is stored as its raw bytes', async ({ sink, readBack, claimCheck }) => {
      const raw = randomBytes(600 * 1024);
      const record = pageRecord('https://a.test/image.png', 1, {
        contentType: 'image/png',
        bodyEncoding: 'base64',
        body: raw.toString('base64'),
        bodyBytes: raw.length,
        bodySha256: sha256(raw),
      });
      await sink.write([sinkRecord(record)]);
      const [stored] = await readBack(1);
      assert.ok(stored);
      const parsed = parse(stored);
      if (!claimCheck) {
        assert.equal(parsed.body, record.body);
        return;
      }
      assert.equal(parsed.body, null);
      assert.equal(parsed.bodyEncoding, 'base64');
      assert.equal(parsed.bodyRef?.sha256, record.bodySha256);
      assert.equal(parsed.bodyRef?.bytes, raw.length);
      assert.deepEqual(await claimCheck.blobStore.get(parsed.bodyRef?.key ?? ''), raw);
    });

    define('each capture keeps its body under its own capture id', async ({ sink, readBack, claimCheck }) => {
      const body = 'z'.repeat(700 * 1024);
      await sink.write([sinkRecord(pageRecord('https://a.test/p1', 1, { body }))]);
      await sink.write([sinkRecord(pageRecord('https://a.test/p2', 2, { body }))]);
      const stored = (await readBack(2)).map(parse);
      assert.equal(stored.length, 2);
      if (!claimCheck) return;
      const [a, b] = stored;
      assert.ok(a?.bodyRef && b?.bodyRef);
      // The record, its blob and its SQL rows join on the capture id (page record /3).
      assert.equal(a.bodyRef.key, `captures/job-1/run-1/${a.captureId}/body`);
      assert.equal(b.bodyRef.key, `captures/job-1/run-1/${b.captureId}/body`);
      assert.notEqual(a.bodyRef.key, b.bodyRef.key);
      assert.equal(a.bodyRef.sha256, b.bodyRef.sha256);
      assert.equal((await claimCheck.blobStore.get(b.bodyRef.key)).toString('utf8'), body);
    });

    define('close waits for writes in progress, and is safe to call twice', async ({ sink, readBack }) => {
      const write = sink.write([sinkRecord(pageRecord('https://a.test/last', 1))]);
      await sink.close();
      await write;
      await sink.close();
      assert.equal((await readBack(1)).length, 1);
    });

    define('a write after close rejects with SINK_CLOSED', async ({ sink }) => {
      await sink.close();
      await assert.rejects(sink.write([sinkRecord(pageRecord('https://a.test/late', 1))]), {
        name: 'StorageError',
        code: 'SINK_CLOSED',
        retriable: false,
      });
      await assert.rejects(sink.write([]), { code: 'SINK_CLOSED' });
    });
  });
}
