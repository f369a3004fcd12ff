import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import { runCli } from '../helpers/cli.js';
import { identityArgs, PAGES, startProxyFixture, type ProxyFixture } from '../helpers/proxy-fixture.js';
import { readRecords } from '../helpers/records.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-proxy-e2e-'));

describe('ackcrawl crawl --proxy --user-agent, embedded, through local proxies', () => {
  let fixture: ProxyFixture;
  let out: string;
  let result: Awaited<ReturnType<typeof runCli>>;
  let records: PageRecord[];

  before(async () => {
    fixture = await startProxyFixture();
    out = tmp();
    const args = ['crawl', ...fixture.seeds(), '--out', out, '--allow-private', ...identityArgs(fixture)];
    args.push('--processes', '1', '--host-delay', '0', '--host-concurrency', '4', '--retry-delay', '100');
    // One crawler process, so its pool sees enough of the dead proxy's failures to retire it.
    result = await runCli([...args, '--json'], { ACKCRAWL_PROXY_MAX_FAILURES: '2' });
    records = result.code === 0 ? readRecords(out) : [];
  });
  after(async () => {
    await fixture.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('every page ends ok on its first attempt, each host through one live proxy, UAs rotated, no secret leaked', () => {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      records.length,
      fixture.sites.length * PAGES.length,
      `each page recorded once; the records: ${JSON.stringify(
        records.map((r) => ({ url: r.url, outcome: r.outcome, error: r.error, attempt: r.attempt })),
      )}\nthe crawl's summary: ${result.stdout.slice(-1_000)}\nits log: ${result.stderr.slice(-4_000)}`,
    );
    fixture.check(records, result.stdout + result.stderr);
    for (const site of fixture.sites) {
      // robots.txt too: once per host, through the host's proxy like its pages.
      const pages = site.hits.filter((h) => h.path !== '/robots.txt');
      assert.equal(pages.length, PAGES.length, `${site.host}: fetched once each`);
      assert.equal(site.hits.length - pages.length, 1, `${site.host}: robots.txt fetched once`);
    }
  });

  test('the dead proxy was retired, and the log names it without its password', () => {
    const retired = result.stderr.split('\n').filter((line) => line.includes('proxy retired'));
    assert.ok(retired.length >= 1, result.stderr);
    assert.ok(retired.some((line) => line.includes(redactProxyUrl(fixture.dead))));
  });
});

describe('ackcrawl crawl --proxy: bad proxy URLs', () => {
  test('are refused up front with exit 2, naming the option but not the password', async () => {
    const out = tmp();
    try {
      const r = await runCli([
        'crawl',
        'http://127.0.0.1:9/',
        '--out',
        out,
        '--proxy',
        'socks5://127.0.0.1:1080',
        '--proxy',
        'ftp://user:topsecret@127.0.0.1:21',
        '--proxy',
        'http://user:topsecret@127.0.0.1:3128/some/path',
      ]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--proxy #2: unsupported proxy scheme 'ftp:'/);
      assert.match(r.stderr, /--proxy #3: .*no path/);
      assert.doesNotMatch(r.stderr, /--proxy #1/);
      assert.ok(!r.stderr.includes('topsecret'));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
