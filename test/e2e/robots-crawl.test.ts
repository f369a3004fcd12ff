import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { startRobotsSite, type RobotsSite } from '../fixtures/robots-site.js';
import { runCli } from '../helpers/cli.js';
import { countByUrl, readRecords } from '../helpers/records.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-robots-'));
const PAGES = {
  '/': ['/a', '/b', '/private', '/private/x', '/only-star'],
  '/a': ['/b'],
  '/b': [],
  '/only-star': [],
};
const paths = (site: RobotsSite): string[] => site.hits.map((h) => h.path);

/** Gaps between the starts of successive page requests (robots.txt left out), in ms. */
const gaps = (site: RobotsSite): number[] => {
  const starts = site.hits.filter((h) => h.path !== '/robots.txt').map((h) => h.at);
  return starts.slice(1).map((at, i) => at - (starts[i] as number));
};

describe('robots.txt in an embedded crawl with three crawler processes', () => {
  let sites: Record<'agent' | 'missing' | 'flaky' | 'slow' | 'capped', RobotsSite>;
  let out: string;
  let records: PageRecord[];
  let code: number | null;
  let stderr: string;

  before(async () => {
    sites = {
      // A group for our product token beats `*`, which would forbid everything.
      agent: await startRobotsSite({
        robots: () => ({
          status: 200,
          body: '# test\nUser-agent: *\nDisallow: /\n\nUser-agent: ackcrawl\nDisallow: /private\nAllow: /private/x\n',
        }),
        pages: PAGES,
      }),
      missing: await startRobotsSite({ robots: () => ({ status: 404 }), pages: PAGES }),
      // 503, then a dropped connection, then rules: no page before the third robots.txt answer.
      flaky: await startRobotsSite({
        robots: (n) =>
          n === 1
            ? { status: 503 }
            : n === 2
              ? 'reset'
              : { status: 200, body: 'User-agent: *\nDisallow: /b\n' },
        pages: PAGES,
      }),
      slow: await startRobotsSite({
        robots: () => ({ status: 200, body: 'User-agent: *\nCrawl-delay: 0.7\n' }),
        pages: PAGES,
      }),
      capped: await startRobotsSite({
        robots: () => ({ status: 200, body: 'User-agent: ackcrawl\nCrawl-delay: 30\n' }),
        pages: PAGES,
      }),
    };
    out = tmp();
    const seeds = Object.values(sites).map((s) => s.url);
    const result = await runCli(
      [
        'crawl',
        ...seeds,
        '--out',
        out,
        '--allow-private',
        '--processes',
        '3',
        '--host-delay',
        '0',
        '--host-concurrency',
        '4',
        '--retry-delay',
        '100',
        '--max-crawl-delay',
        '1200',
        '--json',
        '--verbose',
      ],
      { ACKCRAWL_ROBOTS_RETRY_MS: '150' },
    );
    code = result.code;
    stderr = result.stderr;
    records = readRecords(out);
  });
  after(async () => {
    for (const site of Object.values(sites)) await site.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('the crawl completes, one record per URL', () => {
    assert.equal(code, 0, stderr.slice(-3000));
    for (const [url, n] of countByUrl(records)) assert.equal(n, 1, `${url} recorded ${n} times`);
  });

  test('robots.txt is fetched once per host, by one of the three processes', () => {
    for (const [name, site] of Object.entries(sites)) {
      const want = name === 'flaky' ? 3 : 1;
      assert.equal(site.count('/robots.txt'), want, `${name}: robots.txt requests`);
      assert.equal(paths(site)[0], '/robots.txt', `${name}: robots.txt comes first`);
      assert.equal(site.count('/sitemap.xml'), 0, `${name}: no sitemaps unless asked`);
    }
  });

  test('disallowed URLs are never requested and are recorded ROBOTS_DENIED with the line', () => {
    const { agent } = sites;
    assert.equal(agent.count('/private'), 0);
    assert.equal(agent.count('/private/x'), 1, 'Allow: beats the shorter Disallow');
    assert.equal(agent.count('/a'), 1, 'the ackcrawl group beats `User-agent: *` / Disallow: /');
    const denied = records.find((r) => r.url === `${agent.origin}/private`);
    assert.equal(denied?.outcome, 'failed');
    assert.deepEqual(denied?.error, {
      code: 'ROBOTS_DENIED',
      message: 'Disallow: /private (robots.txt line 6)',
    });
    assert.equal(denied?.attempt, 1);
    assert.equal(denied?.parentUrl, `${agent.origin}/`);
  });

  test('robots.txt missing (404): every page is crawled', () => {
    const mine = records.filter((r) => r.url.startsWith(sites.missing.origin));
    assert.equal(mine.length, 6);
    assert.ok(mine.every((r) => r.error?.code !== 'ROBOTS_DENIED'));
    for (const path of ['/', '/a', '/b', '/private', '/private/x', '/only-star']) {
      assert.equal(sites.missing.count(path), 1, `${path} fetched`);
    }
  });

  test('503 and a dropped connection: no page until robots.txt arrives on a later try, then crawled', () => {
    const { flaky } = sites;
    const order = paths(flaky);
    assert.deepEqual(order.slice(0, 3), ['/robots.txt', '/robots.txt', '/robots.txt']);
    assert.equal(flaky.count('/b'), 0, 'its rules apply once known');
    assert.equal(records.find((r) => r.url === `${flaky.origin}/a`)?.outcome, 'ok');
    assert.equal(records.find((r) => r.url === `${flaky.origin}/b`)?.error?.code, 'ROBOTS_DENIED');
    const retry = flaky.hits.filter((h) => h.path === '/robots.txt').map((h) => h.at);
    assert.ok((retry[1] as number) - (retry[0] as number) >= 140, 'the second try waited for the backoff');
  });

  test('Crawl-delay raises the gap between request starts, up to the cap', () => {
    // Measured where requests arrive: each gap may lose some jitter (a process busier than another,
    // a new connection), the span from first to last may lose it only once.
    const check = (site: RobotsSite, delayMs: number): void => {
      const between = gaps(site);
      assert.ok(between.length >= 4, `${between.length} gaps`);
      for (const gap of between)
        assert.ok(gap >= delayMs - 150, `gap ${gap.toFixed(0)} ms, delay ${delayMs}`);
      const span = between.reduce((a, b) => a + b, 0);
      assert.ok(
        span >= between.length * delayMs - 150,
        `span ${span.toFixed(0)} ms for ${between.length} gaps`,
      );
      assert.ok(span < between.length * (delayMs + 1000), `span ${span.toFixed(0)} ms: slower than asked`);
    };
    check(sites.slow, 700);
    check(sites.capped, 1200);
    assert.match(stderr, /Crawl-delay is above the cap/);
  });
});

describe('sitemaps in an embedded crawl (--sitemaps)', () => {
  let site: RobotsSite;
  let out: string;
  let records: PageRecord[];
  let code: number | null;
  let stderr: string;
  const urlset = (entries: [string, string | null][]): string =>
    `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries
      .map(([loc, mod]) => `<url><loc>${loc}</loc>${mod ? `<lastmod>${mod}</lastmod>` : ''}</url>`)
      .join('')}</urlset>`;
  const index = (locs: string[]): string =>
    `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs
      .map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`)
      .join('')}</sitemapindex>`;

  before(async () => {
    let origin = '';
    const files: Record<string, { type: string; body: Buffer | string }> = {};
    site = await startRobotsSite({
      robots: () => ({
        status: 200,
        body: `User-agent: *\nDisallow: /secret\nSitemap: ${origin}/index.xml\n`,
      }),
      pages: {
        '/': [],
        '/s1': ['/linked'],
        '/s2': [],
        '/secret': [],
        '/gz1': [],
        '/deep-ok': [],
        '/linked': [],
      },
      files,
    });
    origin = site.origin;
    const xml = 'application/xml';
    files['/sitemap.xml'] = {
      type: xml,
      body: urlset([
        [`${origin}/s1`, '2026-01-02'],
        [`${origin}/s2`, null],
        [`${origin}/secret`, null],
        ['http://127.0.0.2:9/elsewhere', null],
      ]),
    };
    files['/index.xml'] = { type: xml, body: index([`${origin}/child.xml.gz`, `${origin}/nested-1.xml`]) };
    files['/child.xml.gz'] = {
      type: 'application/x-gzip',
      body: gzipSync(urlset([[`${origin}/gz1`, '2025-12-31T23:59:59Z']])),
    };
    files['/nested-1.xml'] = { type: xml, body: index([`${origin}/nested-2.xml`]) };
    files['/nested-2.xml'] = {
      type: xml,
      body: index([`${origin}/nested-3.xml`]),
    };
    files['/nested-3.xml'] = { type: xml, body: urlset([[`${origin}/too-deep`, null]]) };
    out = tmp();
    const result = await runCli(
      ['crawl', site.url, '--out', out, '--allow-private', '--host-delay', '0', '--sitemaps', '--json'],
      { ACKCRAWL_SITEMAP_MAX_DEPTH: '2' },
    );
    code = result.code;
    stderr = result.stderr;
    records = readRecords(out);
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
  });

  const record = (path: string): PageRecord | undefined => records.find((r) => r.url === site.origin + path);

  test('robots.txt Sitemap: lines and /sitemap.xml feed the crawl, each read once', () => {
    assert.equal(code, 0, stderr.slice(-3000));
    for (const path of ['/sitemap.xml', '/index.xml', '/child.xml.gz', '/s1', '/s2', '/gz1', '/linked']) {
      assert.equal(site.count(path), 1, `${path} requests`);
    }
    assert.equal(site.count('/robots.txt'), 1);
    for (const [url, n] of countByUrl(records)) assert.equal(n, 1, `${url} recorded ${n} times`);
  });

  test('page records of sitemap URLs carry lastmod; others do not', () => {
    assert.equal(record('/s1')?.lastmod, '2026-01-02');
    assert.equal(record('/gz1')?.lastmod, '2025-12-31T23:59:59Z', 'from the gzip child of the index');
    assert.equal(record('/s2')?.outcome, 'ok');
    assert.equal('lastmod' in (record('/s2') ?? {}), false, 'no <lastmod>, no field');
    assert.equal('lastmod' in (record('/linked') ?? {}), false);
    assert.equal(record('/s1')?.parentUrl, `${site.origin}/sitemap.xml`);
  });

  test('a sitemap is a record too; its links are its entries', () => {
    const index = record('/index.xml');
    assert.equal(index?.outcome, 'ok');
    assert.deepEqual(index?.links, [`${site.origin}/child.xml.gz`, `${site.origin}/nested-1.xml`]);
    assert.equal(index?.parentUrl, `${site.origin}/robots.txt`);
  });

  test('sitemap URLs still pass robots.txt and scope', () => {
    assert.equal(site.count('/secret'), 0);
    assert.equal(record('/secret')?.error?.code, 'ROBOTS_DENIED');
    assert.ok(!records.some((r) => r.url.startsWith('http://127.0.0.2')));
  });

  test('index recursion stops at the depth limit', () => {
    assert.equal(site.count('/nested-2.xml'), 1, 'depth 2 is read');
    assert.equal(site.count('/nested-3.xml'), 0, 'depth 3 is not');
    assert.equal(site.count('/too-deep'), 0);
  });
});
