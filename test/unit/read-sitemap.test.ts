import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { readSitemap } from '../../client/crawler/sitemap/read-sitemap.js';
import { sitemapEntryTasks } from '../../scheduler/robots/sitemap-tasks.js';

const BASE = 'http://a.test/sitemap.xml';
const LIMITS = { maxUrls: 50_000, maxBytes: 1 << 20 };
const urlset = (n: number, lastmod = true): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from(
    { length: n },
    (_, i) =>
      `<url><loc> http://a.test/p${i} </loc>${lastmod ? `<lastmod>2026-01-0${(i % 9) + 1}</lastmod>` : ''}</url>`,
  ).join('\n')}</urlset>`;

describe('readSitemap', () => {
  test('a urlset gives pages with their lastmod, normalised', async () => {
    const { entries, truncated } = await readSitemap(Buffer.from(urlset(3)), BASE, LIMITS);
    assert.equal(truncated, false);
    assert.deepEqual(entries, [
      { url: 'http://a.test/p0', kind: 'page', lastmod: '2026-01-01' },
      { url: 'http://a.test/p1', kind: 'page', lastmod: '2026-01-02' },
      { url: 'http://a.test/p2', kind: 'page', lastmod: '2026-01-03' },
    ]);
  });

  test('a sitemap index gives sitemaps; prefixes, CDATA and a BOM are fine', async () => {
    const xml =
      '\uFEFF<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      '<sm:sitemap><sm:loc><![CDATA[http://a.test/s1.xml.gz]]></sm:loc><sm:lastmod>2025-12-31T10:00:00Z</sm:lastmod></sm:sitemap>' +
      '<sm:sitemap><sm:loc>/s2.xml</sm:loc></sm:sitemap></sm:sitemapindex>';
    const { entries } = await readSitemap(Buffer.from(xml), BASE, LIMITS);
    assert.deepEqual(entries, [
      { url: 'http://a.test/s1.xml.gz', kind: 'sitemap', lastmod: '2025-12-31T10:00:00Z' },
      { url: 'http://a.test/s2.xml', kind: 'sitemap', lastmod: null },
    ]);
  });

  test('gzip by its magic bytes, inflated up to the byte limit', async () => {
    const gz = gzipSync(urlset(2000, false));
    const all = await readSitemap(gz, BASE, LIMITS);
    assert.equal(all.entries.length, 2000);
    const cut = await readSitemap(gz, BASE, { maxUrls: 50_000, maxBytes: 10_000 });
    assert.equal(cut.truncated, true);
    assert.ok(cut.entries.length > 0 && cut.entries.length < 2000, `${cut.entries.length} entries`);
  });

  test('at most maxUrls entries', async () => {
    const { entries, truncated } = await readSitemap(Buffer.from(urlset(100)), BASE, {
      ...LIMITS,
      maxUrls: 10,
    });
    assert.equal(entries.length, 10);
    assert.equal(truncated, true);
  });

  test('a plain-text sitemap: one URL per line; junk lines skipped', async () => {
    const { entries } = await readSitemap(
      Buffer.from('http://a.test/x\r\n\nnot a url at all\nhttp://a.test/y'),
      BASE,
      LIMITS,
    );
    assert.deepEqual(
      entries.map((e) => e.url),
      ['http://a.test/x', 'http://a.test/y'],
    );
  });

  test('HTML or a broken gzip is SITEMAP_INVALID', async () => {
    await assert.rejects(readSitemap(Buffer.from('<html><body>soft 404</body></html>'), BASE, LIMITS), {
      code: 'SITEMAP_INVALID',
    });
    await assert.rejects(readSitemap(Buffer.from([0x1f, 0x8b, 1, 2, 3]), BASE, LIMITS), {
      code: 'SITEMAP_INVALID',
    });
  });

  test('malformed XML yields what can be read', async () => {
    const xml = '<urlset><url><loc>http://a.test/ok</loc></url><url><loc>http://a.test/b<<</loc></url><url';
    const { entries } = await readSitemap(Buffer.from(xml), BASE, LIMITS);
    assert.equal(entries[0]?.url, 'http://a.test/ok');
  });
});

describe('sitemapEntryTasks', () => {
  const inScope = (url: string): boolean => url.startsWith('http://a.test/');
  test('pages are seeds with their lastmod; sitemaps nest up to maxDepth; scope applies', () => {
    const entries = [
      { url: 'http://a.test/p', kind: 'page' as const, lastmod: '2026-01-01' },
      { url: 'http://b.test/p', kind: 'page' as const, lastmod: null },
      { url: 'http://a.test/s.xml', kind: 'sitemap' as const, lastmod: null },
    ];
    const tasks = sitemapEntryTasks(
      entries,
      { runId: 'default', url: BASE, depth: 0 },
      { inScope, maxDepth: 1 },
    );
    assert.deepEqual(
      tasks.map((t) => [t.url, t.kind, t.depth, t.lastmod, t.parentUrl]),
      [
        ['http://a.test/p', 'page', 0, '2026-01-01', BASE],
        ['http://a.test/s.xml', 'sitemap', 1, null, BASE],
      ],
    );
    const deeper = sitemapEntryTasks(
      entries,
      { runId: 'default', url: BASE, depth: 1 },
      { inScope, maxDepth: 1 },
    );
    assert.deepEqual(
      deeper.map((t) => t.kind),
      ['page'],
      'a sitemap beyond the depth limit is dropped',
    );
  });
});
