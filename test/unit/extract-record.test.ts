import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanRecord, type CleanRecordOptions } from '../../master/extract/clean-record.js';
import { sha256Hex } from '../../shared/ports/blob-store.js';
import { labelledPageHtml } from '../../scripts/bench/extract/fixtures.js';
import { pageRecordOf } from '../../scripts/bench/extract/page-records.js';
import { MemoryBlobStore } from '../helpers/memory-blob-store.js';

const html = labelledPageHtml('threatpost.com.android');
const options = (blobStore: MemoryBlobStore | null = null): CleanRecordOptions => ({
  blobStore,
  maxHtmlChars: 4 * 1024 * 1024,
  maxElements: 60_000,
  now: () => 1_234,
});
const value = (record: unknown): Buffer => Buffer.from(JSON.stringify(record));
const base = () =>
  pageRecordOf({
    url: 'https://threatpost.com/a/',
    html,
    jobId: 'job-1',
    runId: 'run-1',
    captureId: 'cap-1',
  });

describe('cleanRecord', () => {
  test('a page record becomes a results row with the record ids and the fetch time', async () => {
    const outcome = await cleanRecord(value(base()), 'kafka:t:0:5', options());
    assert.equal(outcome.kind, 'result');
    if (outcome.kind !== 'result') return;
    const row = outcome.row;
    assert.deepEqual(
      [row.captureId, row.runId, row.jobId, row.url, row.status, row.at, row.fetchedAt],
      ['cap-1', 'run-1', 'job-1', 'https://threatpost.com/a/', 200, 1_234, 1_700_000_000_000],
    );
    assert.equal(row.author, "Lindsey O'Donnell");
    assert.equal(row.language, 'en');
    assert.match(row.mainText ?? '', /Android\/Filecoder\.C/);
    assert.equal((row.data as { words: number }).words > 400, true);
  });

  test('an older /3 record is cleaned too, into the same row', async () => {
    const outcome = await cleanRecord(value({ ...base(), schema: 'ackcrawl.page/3' }), 'file:a:1', options());
    assert.equal(outcome.kind, 'result');
    assert.equal(outcome.kind === 'result' && outcome.row.captureId, 'cap-1');
  });

  test('a claim-checked body is read from the blob store and checked against its hash', async () => {
    const store = new MemoryBlobStore();
    const record = base();
    const body = Buffer.from(record.body ?? '', 'utf8');
    await store.put('captures/cap-1/body', body);
    const ref = {
      store: 's3',
      bucket: 'memory',
      key: 'captures/cap-1/body',
      sha256: sha256Hex(body),
      bytes: body.length,
    };
    const checked = { ...record, body: null, bodyRef: ref };
    assert.equal((await cleanRecord(value(checked), 's', options(store))).kind, 'result');

    await store.put('captures/cap-1/body', Buffer.from('<p>swapped</p>'));
    const swapped = await cleanRecord(value(checked), 's', options(store));
    assert.equal(swapped.kind === 'failure' && swapped.failure.code, 'EXTRACT_BODY_MISSING');

    await store.delete('captures/cap-1/body');
    const gone = await cleanRecord(value(checked), 'kafka:t:1:9', options(store));
    assert.deepEqual(
      gone.kind === 'failure' && [gone.failure.code, gone.failure.captureId, gone.failure.source],
      ['EXTRACT_BODY_MISSING', 'cap-1', 'kafka:t:1:9'],
    );
    const elsewhere = await cleanRecord(
      value({ ...checked, bodyRef: { ...ref, bucket: 'other' } }),
      's',
      options(store),
    );
    assert.match(elsewhere.kind === 'failure' ? elsewhere.failure.reason : '', /s3:other/);
  });

  test('a blob store that cannot be reached rejects: the record is read again, not logged', async () => {
    const store = new MemoryBlobStore();
    store.get = () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'BLOB_STORE_UNAVAILABLE' }));
    const ref = { store: 's3', bucket: 'memory', key: 'k', sha256: 'x', bytes: 1 };
    await assert.rejects(
      cleanRecord(value({ ...base(), body: null, bodyRef: ref }), 's', options(store)),
      /ECONNREFUSED/,
    );
  });

  test('what cannot be cleaned is a failure with a reason, never a throw', async () => {
    const cases: [unknown, string, RegExp][] = [
      ['{"schema": "ackcrawl.page/3", "url": ', 'EXTRACT_BAD_RECORD', /not JSON/],
      [{ ...base(), schema: 'ackcrawl.page/9' }, 'EXTRACT_BAD_RECORD', /schema/],
      [
        { ...base(), bodyEncoding: 'base64', body: 'AAEC', contentType: 'application/pdf' },
        'EXTRACT_BINARY_BODY',
        /application\/pdf/,
      ],
      [
        { ...base(), contentType: 'application/json', body: '{"a":1}' },
        'EXTRACT_NOT_HTML',
        /application\/json/,
      ],
      [{ ...base(), body: `<p>${'x'.repeat(5 * 1024 * 1024)}</p>` }, 'EXTRACT_TOO_LARGE', /more than/],
      [{ ...base(), body: '<div>'.repeat(70_000) }, 'EXTRACT_FAILED', /elements/],
      // Ids the results table cannot key: the record's fault, not the chunk's.
      [{ ...base(), captureId: '' }, 'EXTRACT_BAD_RECORD', /captureId/],
      [{ ...base(), runId: 'r'.repeat(129) }, 'EXTRACT_BAD_RECORD', /runId/],
    ];
    for (const [record, code, reason] of cases) {
      const raw = typeof record === 'string' ? Buffer.from(record) : value(record);
      const outcome = await cleanRecord(raw, 'src', options());
      assert.equal(outcome.kind, 'failure', code);
      if (outcome.kind !== 'failure') continue;
      assert.equal(outcome.failure.code, code);
      assert.match(outcome.failure.reason, reason);
      assert.equal(outcome.failure.at, 1_234);
    }
    const bad = await cleanRecord(value({ ...base(), schema: 'nope' }), 'src', options());
    assert.equal(
      bad.kind === 'failure' && bad.failure.captureId,
      'cap-1',
      'ids kept where they are readable',
    );
  });

  test('a failed fetch and a page without a body are skipped, not logged', async () => {
    const failed = await cleanRecord(
      value({
        ...base(),
        outcome: 'failed',
        error: { code: 'HTTP_404', message: 'gone' },
        body: null,
        bodyEncoding: null,
      }),
      's',
      options(),
    );
    assert.equal(failed.kind, 'skip');
    const empty = await cleanRecord(
      value({ ...base(), status: 304, body: null, bodyEncoding: null }),
      's',
      options(),
    );
    assert.equal(empty.kind, 'skip');
  });

  test("a redirect's record is skipped: its body is the server's note, not an article", async () => {
    const moved = await cleanRecord(
      value({
        ...base(),
        status: 301,
        headers: { location: 'http://other.test/article' },
        links: ['http://other.test/article'],
        body: '<html><body><h1>Moved Permanently</h1><p>The document has moved here.</p></body></html>',
      }),
      's',
      options(),
    );
    assert.deepEqual(moved, { kind: 'skip', reason: 'a redirect (HTTP 301)' });
  });
});
