import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { startMessySite, type MessySite } from '../fixtures/messy-site.js';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';

describe('ackcrawl crawl, embedded, against the messy web', () => {
  let site: MessySite;
  let out: string;
  let result: Awaited<ReturnType<typeof runCli>>;
  let byTarget: Map<string, PageRecord>;

  before(async () => {
    site = await startMessySite();
    out = mkdtempSync(join(tmpdir(), 'ackcrawl-messy-'));
    result = await runCli([
      'crawl',
      site.url,
      '--out',
      out,
      '--allow-private',
      '--host-delay',
      '0',
      '--host-concurrency',
      '8',
      '--max-links-per-page',
      '20',
      '--max-url-length',
      '200',
      '--json',
    ]);
    // Keyed by request target (path and query as sent), which is how the server logs them.
    byTarget = new Map(
      readRecords(out).map((r) => {
        const url = new URL(r.url);
        return [url.pathname + url.search, r];
      }),
    );
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('completes, every record ok and valid: no link was requested in a spelling the server lacks', () => {
    assert.equal(result.code, 0, result.stderr);
    for (const record of byTarget.values()) {
      assert.ok(pageRecordSchema.safeParse(record).success, record.url);
      assert.equal(record.outcome, 'ok', `${record.url}: ${record.error?.code ?? ''}`);
    }
    assert.ok(!site.requests.some((r) => r.startsWith('/never') || r.startsWith('/long/')));
  });

  test('each legacy-encoded page is stored decoded, with its charset and where it came from', () => {
    for (const page of site.pages) {
      const record = byTarget.get(page.path);
      assert.ok(record, page.path);
      assert.equal(record.bodyEncoding, 'utf8', page.path);
      assert.equal(record.body, page.text, page.path);
      assert.deepEqual(record.charset, page.charset, page.path);
      assert.ok(record.bodyBytes > 0 && record.bodySha256 !== null, page.path);
    }
  });

  test('their non-ASCII links were fetched as a browser requests them, and decoded too', () => {
    for (const page of site.pages) {
      assert.ok(site.requests.includes(page.linkTarget), `${page.path} -> ${page.linkTarget} not requested`);
      assert.deepEqual(byTarget.get(page.path)?.links, [site.origin + page.linkTarget], page.path);
      const linked = byTarget.get(page.linkTarget);
      assert.equal(linked?.body, page.linkedText, page.linkTarget);
      assert.equal(linked?.parentUrl, site.origin + page.path);
    }
    // Spot-check one target by hand: GBK query bytes after a UTF-8 path.
    assert.ok(
      site.requests.includes(
        '/gbk/%E6%96%B0%E9%97%BB/%E7%AC%AC%E4%B8%80%E9%A1%B5.html?%B7%D6%C0%E0=%CC%E5%D3%FD',
      ),
    );
  });

  test('canonical recorded, not followed; meta refresh followed; XHTML and untyped HTML parsed', () => {
    assert.equal(byTarget.get('/gbk/')?.canonicalUrl, `${site.origin}/gbk/%E9%A6%96%E9%A1%B5`);
    assert.ok(!site.requests.includes('/gbk/%E9%A6%96%E9%A1%B5'));
    assert.equal(byTarget.get('/refresh')?.refreshUrl, `${site.origin}/refreshed`);
    assert.ok(site.requests.includes('/refreshed'));
    assert.ok(site.requests.includes('/from-xhtml'), 'XHTML with <title/> was parsed as XML reads it');
    assert.equal(byTarget.get('/untyped')?.sniffedContentType, 'text/html');
    assert.ok(site.requests.includes('/from-untyped'));
  });

  test('PDF and JSON are stored raw and not parsed for links', () => {
    const pdf = byTarget.get('/doc.pdf');
    assert.equal(pdf?.bodyEncoding, 'base64');
    assert.match(Buffer.from(pdf?.body ?? '', 'base64').toString('latin1'), /^%PDF-1\.4/);
    assert.deepEqual(pdf?.links, []);
    const json = byTarget.get('/data.json');
    assert.equal(json?.bodyEncoding, 'utf8');
    assert.deepEqual(json?.links, []);
    assert.ok(!site.requests.includes('/never-from-pdf') && !site.requests.includes('/never-from-json'));
  });

  test('the link limits given on the command line reached the crawlers', () => {
    const many = byTarget.get('/many');
    assert.equal(many?.links.length, 20);
    assert.deepEqual(many?.linksDropped, { tooLong: 1, overLimit: 5 });
    for (let i = 0; i < 25; i++) {
      assert.equal(site.requests.includes(`/many/${i}`), i < 20, `/many/${i}`);
    }
  });
});
