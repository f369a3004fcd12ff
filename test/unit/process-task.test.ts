import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import type { FetchedPage, Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { processTask, type LinkLimits } from '../../client/crawler/page/process-task.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { recordKeysOf } from '../helpers/records.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';

const URL_ = 'https://site.example/page';

/** A fetcher that answers every URL with one response. */
function fetcherOf(contentType: string | null, body: Buffer | string): Fetcher {
  const page: FetchedPage = {
    status: 200,
    finalUrl: URL_,
    redirects: [],
    headers: contentType === null ? {} : { 'content-type': contentType },
    contentType,
    body: typeof body === 'string' ? Buffer.from(body) : body,
  };
  return { fetch: () => Promise.resolve(page) } as unknown as Fetcher;
}

async function run(
  contentType: string | null,
  body: Buffer | string,
  linkLimits?: LinkLimits,
): Promise<{ record: PageRecord; follow: string[] }> {
  const frame = await processTask(
    { taskId: 't1', url: URL_, depth: 0, attempt: 1, parentUrl: null },
    { fetcher: fetcherOf(contentType, body), crawlerId: 'test', ...(linkLimits ? { linkLimits } : {}) },
  );
  const { header, record } = decodeOutcomeFrame(frame);
  const parsed = pageRecordSchema.parse(JSON.parse(record.toString('utf8')));
  return { record: parsed, follow: header.links };
}

const LINKY = '<a href="/from-body">x</a>';

describe('processTask: what is parsed and how it is recorded', () => {
  test('a GBK page: decoded body, charset recorded, GBK query sent, raw bytes hashed', async () => {
    const html = `<html><head><meta charset="gbk"><link rel="canonical" href="/规范"></head>
      <body><p>中文</p><a href="/页面?q=中文">x</a></body></html>`;
    const bytes = iconv.encode(html, 'gbk');
    const { record, follow } = await run('text/html', bytes);
    assert.equal(record.body, html);
    assert.equal(record.bodyEncoding, 'utf8');
    assert.deepEqual(record.charset, { name: 'GBK', source: 'meta' });
    assert.equal(record.bodyBytes, bytes.length);
    assert.deepEqual(follow, ['https://site.example/%E9%A1%B5%E9%9D%A2?q=%D6%D0%CE%C4']);
    assert.equal(record.canonicalUrl, 'https://site.example/%E8%A7%84%E8%8C%83');
  });

  test('PDF, images, JSON and octet-stream are stored raw and never parsed for links', async () => {
    const cases: [string, Buffer | string, 'utf8' | 'base64'][] = [
      ['application/pdf', `%PDF-1.4 ${LINKY}`, 'base64'],
      ['image/png', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(LINKY)]), 'base64'],
      ['application/octet-stream', `<html>${LINKY}</html>`, 'base64'],
      ['application/json', JSON.stringify({ html: LINKY }), 'utf8'],
      ['text/plain', `<html>${LINKY}</html>`, 'utf8'],
    ];
    for (const [type, body, encoding] of cases) {
      const { record, follow } = await run(type, body);
      assert.deepEqual(record.links, [], type);
      assert.deepEqual(follow, [], type);
      assert.equal(record.bodyEncoding, encoding, type);
      const raw = typeof body === 'string' ? Buffer.from(body) : body;
      if (encoding === 'base64') assert.ok(Buffer.from(record.body ?? '', 'base64').equals(raw), type);
      assert.equal(record.sniffedContentType, null, type);
    }
  });

  test('without a Content-Type: HTML is sniffed and parsed, a PDF is sniffed and stored raw', async () => {
    const html = await run(null, `<!doctype html>${LINKY}`);
    assert.equal(html.record.sniffedContentType, 'text/html');
    assert.deepEqual(html.follow, ['https://site.example/from-body']);
    const pdf = await run(null, `%PDF-1.7 ${LINKY}`);
    assert.equal(pdf.record.sniffedContentType, 'application/pdf');
    assert.equal(pdf.record.bodyEncoding, 'base64');
    assert.deepEqual(pdf.follow, []);
  });

  test('XHTML is parsed, as XML reads it', async () => {
    const xhtml = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title/></head>
      <body>${LINKY}</body></html>`;
    const { record, follow } = await run('application/xhtml+xml', xhtml);
    assert.deepEqual(follow, ['https://site.example/from-body']);
    assert.deepEqual(record.charset, { name: 'UTF-8', source: 'default' });
  });

  test("the record's keys come in one order, optional ones only when they apply", async () => {
    const keysOf = async (task: { lastmod?: string }): Promise<string[]> => {
      const frame = await processTask(
        { taskId: 't1', url: URL_, depth: 0, attempt: 1, parentUrl: null, ...task },
        { fetcher: fetcherOf('text/html', LINKY), crawlerId: 'test' },
      );
      return recordKeysOf(frame);
    };
    const always = `schema jobId runId captureId url depth parentUrl fetchedAt attempt crawlerId finalUrl
      status outcome error contentType links nofollowLinks nofollow redirects headers durationMs
      bodyBytes bodySha256 bodyEncoding body charset sniffedContentType canonicalUrl refreshUrl
      linksDropped`.split(/\s+/);
    // Not rendered, fetched directly, no sitemap lastmod: no rendered, userAgent, proxy or lastmod key.
    assert.deepEqual(await keysOf({}), always);
    assert.deepEqual(await keysOf({ lastmod: '2026-01-02' }), [...always, 'lastmod']);
  });

  test('meta refresh is followed and recorded', async () => {
    const { record, follow } = await run('text/html', '<meta http-equiv="refresh" content="0;url=/new">');
    assert.deepEqual(follow, ['https://site.example/new']);
    assert.equal(record.refreshUrl, 'https://site.example/new');
  });

  test('the crawl link limits apply and the record counts what they dropped', async () => {
    let html = `<a href="/${'x'.repeat(80)}">long</a>`;
    for (let i = 0; i < 5; i++) html += `<a href="/p${i}">p</a>`;
    const { record, follow } = await run('text/html', html, { maxUrlLength: 60, maxLinksPerPage: 3 });
    assert.deepEqual(
      follow,
      ['/p0', '/p1', '/p2'].map((p) => `https://site.example${p}`),
    );
    assert.deepEqual(record.linksDropped, { tooLong: 1, overLimit: 2 });
    const defaults = await run('text/html', html);
    assert.equal(defaults.follow.length, 6);
    assert.deepEqual(defaults.record.linksDropped, { tooLong: 0, overLimit: 0 });
  });
});
