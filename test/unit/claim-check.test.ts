import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { claimCheck } from '../../shared/adapters/page-sink/claim-check.js';
import { restoreClaimChecks } from '../../shared/adapters/page-sink/claim-check-restore.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import {
  linksBlobSchema,
  PAGE_RECORD_SCHEMA,
  pageRecordSchema,
  storedPageRecordSchema,
  type PageRecord,
} from '../../shared/protocol/page-record.js';
import { MemoryBlobStore } from '../helpers/memory-blob-store.js';

const THRESHOLD = 512 * 1024;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function record(url: string, fields: Partial<PageRecord> = {}): PageRecord {
  const body = fields.body ?? '<p>small</p>';
  return pageRecordSchema.parse({
    schema: PAGE_RECORD_SCHEMA,
    jobId: 'job-1',
    runId: 'run-1',
    captureId: randomUUID(),
    url,
    finalUrl: url,
    status: 200,
    outcome: 'ok',
    error: null,
    contentType: 'text/html; charset=utf-8',
    depth: 0,
    parentUrl: null,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: {},
    fetchedAt: new Date(0).toISOString(),
    durationMs: 1,
    attempt: 1,
    crawlerId: 'unit',
    bodyBytes: Buffer.byteLength(body ?? ''),
    bodySha256: body === null ? null : sha256(Buffer.from(body)),
    bodyEncoding: body === null ? null : 'utf8',
    body,
    ...fields,
  });
}

const sink = (r: PageRecord): SinkRecord => ({ key: r.url, value: Buffer.from(JSON.stringify(r)) });
const stored = (r: SinkRecord) => storedPageRecordSchema.parse(JSON.parse(r.value.toString('utf8')));

/** A sitemap of `n` URLs as the crawler records it: its XML as body, its entries as links. */
function sitemapRecord(n: number): PageRecord {
  const links = Array.from({ length: n }, (_, i) => `http://127.0.0.1:8080/products/item-${i}.html`);
  const body = `<urlset>${links.map((l) => `<url><loc>${l}</loc></url>`).join('')}</urlset>`;
  return record('http://127.0.0.1:8080/sitemap.xml', { contentType: 'application/xml', links, body });
}

describe('the claim check', () => {
  test('a 20,000-URL sitemap: body and links both go to the blob store, counts stay inline', async () => {
    const store = new MemoryBlobStore();
    const original = sitemapRecord(20_000);
    const input = sink(original);
    assert.ok(input.value.length > 2_000_000);
    const { records, moved, movedLinks } = await claimCheck([input], {
      blobStore: store,
      thresholdBytes: THRESHOLD,
    });
    assert.equal(moved, 1);
    assert.equal(movedLinks, 1);
    const [out] = records;
    assert.ok(out);
    assert.ok(out.value.length < 2_000, `the record fits easily (${out.value.length} bytes)`);
    const parsed = stored(out);
    assert.equal(parsed.body, null);
    assert.equal(parsed.links, null);
    assert.equal(parsed.nofollowLinks, null);
    assert.ok(parsed.linksRef && parsed.bodyRef);
    assert.equal(parsed.linksRef.links, 20_000);
    assert.equal(parsed.linksRef.nofollowLinks, 0);
    const blob = await store.get(parsed.linksRef.key);
    assert.equal(sha256(blob), parsed.linksRef.sha256);
    assert.equal(blob.length, parsed.linksRef.bytes);
    assert.deepEqual(linksBlobSchema.parse(JSON.parse(blob.toString('utf8'))), {
      links: original.links,
      nofollowLinks: [],
    });
    assert.equal(store.blobs.get(parsed.linksRef.key)?.contentType, 'application/json; charset=utf-8');
    // A consumer rebuilds the record byte for byte.
    assert.deepEqual(await restoreClaimChecks(out.value, store, { body: true }), input.value);
  });

  test('a page with 5,000 long links and a small body: the links move, the body stays', async () => {
    const store = new MemoryBlobStore();
    const links = Array.from({ length: 5_000 }, (_, i) => `https://a.test/${'deep/'.repeat(20)}${i}`);
    const original = record('https://a.test/', { links, nofollowLinks: links.slice(0, 10) });
    const { records, movedLinks } = await claimCheck([sink(original)], {
      blobStore: store,
      thresholdBytes: THRESHOLD,
    });
    assert.equal(movedLinks, 1);
    const parsed = stored(records[0] as SinkRecord);
    assert.equal(parsed.body, original.body, 'the smaller part stays inline');
    assert.equal(parsed.bodyRef, undefined);
    assert.equal(parsed.linksRef?.links, 5_000);
    assert.equal(parsed.linksRef?.nofollowLinks, 10);
    const restored = storedPageRecordSchema.parse(
      JSON.parse((await restoreClaimChecks((records[0] as SinkRecord).value, store)).toString('utf8')),
    );
    assert.deepEqual(restored.links, links);
    assert.deepEqual(restored.nofollowLinks, links.slice(0, 10));
    assert.equal(restored.linksRef, undefined);
  });

  test('restoring without `body` leaves a moved body where it is', async () => {
    const store = new MemoryBlobStore();
    const { records } = await claimCheck([sink(sitemapRecord(20_000))], {
      blobStore: store,
      thresholdBytes: THRESHOLD,
    });
    const restored = stored({
      key: 'k',
      value: await restoreClaimChecks((records[0] as SinkRecord).value, store),
    });
    assert.equal(restored.links?.length, 20_000);
    assert.equal(restored.body, null);
    assert.ok(restored.bodyRef);
  });

  test('a large body alone moves the body only; small records come back as the same objects', async () => {
    const store = new MemoryBlobStore();
    const big = sink(
      record('https://a.test/big', { body: 'x'.repeat(700_000), links: ['https://a.test/1'] }),
    );
    const small = sink(record('https://a.test/small', { links: ['https://a.test/2'] }));
    const { records, moved, movedLinks } = await claimCheck([small, big], {
      blobStore: store,
      thresholdBytes: THRESHOLD,
    });
    assert.equal(moved, 1);
    assert.equal(movedLinks, 0);
    assert.equal(records[0], small);
    const parsed = stored(records[1] as SinkRecord);
    assert.deepEqual(parsed.links, ['https://a.test/1']);
    assert.equal(parsed.linksRef, undefined);
    assert.equal(store.blobs.size, 1);
  });

  test('the same link list is stored once', async () => {
    const store = new MemoryBlobStore();
    const a = sitemapRecord(20_000);
    const b = { ...a, url: 'http://127.0.0.1:8080/sitemap-copy.xml' };
    await claimCheck([sink(a), sink(b)], { blobStore: store, thresholdBytes: THRESHOLD, concurrency: 1 });
    assert.equal(store.blobs.size, 2, 'one body and one link list for both');
  });

  test("blobs go under the capture's key; a record without a capture id is stored by content", async () => {
    const store = new MemoryBlobStore();
    const big = record('https://a.test/big', { body: 'x'.repeat(THRESHOLD + 1) });
    const { records } = await claimCheck([sink(big)], { blobStore: store, thresholdBytes: THRESHOLD });
    const moved = stored(records[0] as SinkRecord);
    assert.equal(moved.bodyRef?.key, `captures/job-1/run-1/${big.captureId}/body`);
    assert.equal(moved.bodyRef?.sha256, big.bodySha256);
    assert.equal((await store.get(moved.bodyRef?.key ?? '')).toString('utf8'), big.body);
    // A /2 record (no capture): content-addressed, as before.
    const { captureId: _c, jobId: _j, runId: _r, ...older } = big;
    const old = { key: big.url, value: Buffer.from(JSON.stringify({ ...older, schema: 'ackcrawl.page/2' })) };
    const { records: oldOut } = await claimCheck([old], { blobStore: store, thresholdBytes: THRESHOLD });
    const oldRef = (
      JSON.parse((oldOut[0] as SinkRecord).value.toString('utf8')) as { bodyRef: { key: string } }
    ).bodyRef;
    assert.match(oldRef.key, /^bodies\/sha256\//);
  });

  test('restoring checks the blob against its record', async () => {
    const store = new MemoryBlobStore();
    const { records } = await claimCheck([sink(sitemapRecord(20_000))], {
      blobStore: store,
      thresholdBytes: THRESHOLD,
    });
    const value = (records[0] as SinkRecord).value;
    const key = stored(records[0] as SinkRecord).linksRef?.key ?? '';
    store.blobs.set(key, { body: Buffer.from('{"links":[],"nofollowLinks":[]}'), contentType: undefined });
    await assert.rejects(restoreClaimChecks(value, store), { code: 'CLAIM_CHECK_MISMATCH' });
    store.blobs.delete(key);
    await assert.rejects(restoreClaimChecks(value, store), { code: 'BLOB_NOT_FOUND' });
    const elsewhere = Object.assign(new MemoryBlobStore(), {
      location: { store: 's3', bucket: 'other' } as const,
    });
    await assert.rejects(restoreClaimChecks(value, elsewhere), { code: 'CLAIM_CHECK_ELSEWHERE' });
    const plain = sink(record('https://a.test/'));
    assert.equal(
      await restoreClaimChecks(plain.value, store),
      plain.value,
      'nothing to restore: same buffer',
    );
  });
});
