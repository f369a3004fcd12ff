import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rankProxies } from '../../client/crawler/fetch/proxy-pool.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { normalizeProxyUrl, redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { startHttpProxy, startSocks5Server, type TestProxy } from '../helpers/proxies.js';
import { readRecords } from '../helpers/records.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-proxy-e2e-'));
const PAGES = ['/', '/a', '/b', '/c'];
const UAS = [
  'Mozilla/5.0 (X11; Linux x86_64) ackcrawl-rot/1',
  'ackcrawl-rot/2, with a comma',
  'ackcrawl-rot/3',
];

interface Site {
  host: string;
  origin: string;
  hits: { path: string; ua: string; from: string }[];
  server: Server;
}

async function startSite(): Promise<Site> {
  const hits: Site['hits'] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push({ path, ua: req.headers['user-agent'] ?? '', from: req.socket.remoteAddress ?? '' });
    if (!PAGES.includes(path)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(path === '/' ? '<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>' : '<p>leaf</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, hits, server };
}

describe('ackcrawl crawl --proxy --user-agent, embedded, through local proxies', () => {
  const sites: Site[] = [];
  let httpProxy: TestProxy;
  let socks: TestProxy;
  let dead: string;
  let proxies: string[];
  let out: string;
  let result: Awaited<ReturnType<typeof runCli>>;
  let records: PageRecord[];
  /** The proxy each host should use: its first in rendezvous order that is alive. */
  const expected = new Map<string, string>();

  before(async () => {
    httpProxy = await startHttpProxy({
      localAddress: '127.0.0.2',
      auth: { user: 'crawler', pass: 'http-pw-9' },
    });
    socks = await startSocks5Server({
      localAddress: '127.0.0.3',
      auth: { user: 'crawler', pass: 'socks-pw-7' },
    });
    dead = `http://crawler:dead-pw-5@127.0.0.1:${await freePort()}`;
    proxies = [dead, httpProxy.url, socks.url];
    const pool = proxies.map(normalizeProxyUrl);
    const first = (site: Site): string => rankProxies(site.host, pool)[0] as string;
    // Ports are random: take sites until some start on the dead proxy and both live ones get hosts.
    for (;;) {
      sites.push(await startSite());
      const alive = sites.map((s) => rankProxies(s.host, pool).find((p) => p !== pool[0]));
      const onDead = sites.filter((s) => first(s) === pool[0]).length;
      if (onDead >= 2 && new Set(alive).size === 2 && sites.length >= 6) break;
      assert.ok(sites.length < 60, 'no spread of hosts found');
    }
    for (const site of sites) {
      expected.set(
        site.host,
        redactProxyUrl(rankProxies(site.host, pool).find((p) => p !== pool[0]) as string),
      );
    }
    out = tmp();
    const args = ['crawl', ...sites.map((s) => `${s.origin}/`), '--out', out, '--allow-private'];
    args.push('--processes', '1', '--host-delay', '0', '--host-concurrency', '4', '--retry-delay', '100');
    for (const proxy of proxies) args.push('--proxy', proxy);
    for (const ua of UAS) args.push('--user-agent', ua);
    args.push('--json');
    result = await runCli(args, { ACKCRAWL_PROXY_MAX_FAILURES: '2' });
    records = result.code === 0 ? readRecords(out) : [];
  });
  after(async () => {
    for (const site of sites) site.server.close();
    await Promise.all([httpProxy.close(), socks.close()]);
    rmSync(out, { recursive: true, force: true });
  });

  test('every page of every host ends ok, on the first attempt, recorded once', () => {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(records.length, sites.length * PAGES.length);
    for (const record of records) {
      assert.ok(pageRecordSchema.safeParse(record).success, record.url);
      assert.equal(record.outcome, 'ok', `${record.url}: ${record.error?.code}`);
      assert.equal(record.attempt, 1, 'a dead proxy costs time, not attempts');
    }
    assert.equal(new Set(records.map((r) => r.url)).size, records.length);
  });

  test('every request went through a proxy, and each host through one proxy only', () => {
    const byAddress = new Map([
      ['127.0.0.2', redactProxyUrl(httpProxy.url)],
      ['127.0.0.3', redactProxyUrl(socks.url)],
    ]);
    for (const site of sites) {
      assert.equal(site.hits.length, PAGES.length, `${site.host}: each page fetched once`);
      for (const hit of site.hits) {
        assert.equal(
          byAddress.get(hit.from),
          expected.get(site.host),
          `${site.host}${hit.path} from ${hit.from}`,
        );
      }
    }
    for (const record of records) {
      assert.equal(record.proxy, expected.get(new URL(record.url).host), record.url);
    }
    assert.ok(httpProxy.targets.length > 0 && socks.targets.length > 0, 'both live proxies carried hosts');
  });

  test('the dead proxy was retired (and logged without its password)', () => {
    const retired = result.stderr.split('\n').filter((line) => line.includes('proxy retired'));
    assert.ok(retired.length >= 1, result.stderr);
    assert.ok(retired.some((line) => line.includes(redactProxyUrl(dead))));
  });

  test('User-Agents rotate through the list, and each record names the one the site saw', () => {
    const seen = new Map<string, string>();
    for (const site of sites) for (const hit of site.hits) seen.set(`${site.origin}${hit.path}`, hit.ua);
    for (const record of records) {
      assert.ok(record.userAgent && UAS.includes(record.userAgent), record.userAgent);
      assert.equal(seen.get(record.url), record.userAgent, record.url);
    }
    assert.deepEqual(new Set(records.map((r) => r.userAgent)), new Set(UAS), 'every entry was used');
  });

  test('no proxy password appears in the output or the logs', () => {
    const everything = JSON.stringify(records) + result.stdout + result.stderr;
    for (const secret of ['http-pw-9', 'socks-pw-7', 'dead-pw-5']) {
      assert.ok(!everything.includes(secret), `${secret} leaked`);
    }
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
