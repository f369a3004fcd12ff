import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rankProxies } from '../../client/crawler/fetch/proxy-pool.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { normalizeProxyUrl, redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import { holdPort } from './ports.js';
import { startHttpProxy, startSocks5Server, type TestProxy } from './proxies.js';

export const PAGES = ['/', '/a', '/b', '/c'];
/** With spaces and a comma: the rotation list must survive the environment and the API. */
export const USER_AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) ackcrawl-rot/1',
  'ackcrawl-rot/2, with a comma',
  'ackcrawl-rot/3',
];
export const SECRETS = ['http-pw-9', 'socks-pw-7', 'dead-pw-5'];

export interface ProxySite {
  host: string;
  origin: string;
  /** Every request: path, User-Agent, and the address it came from (one per proxy). */
  hits: { path: string; ua: string; from: string }[];
  server: Server;
}

async function startSite(): Promise<ProxySite> {
  const hits: ProxySite['hits'] = [];
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

/**
 * Several small sites on 127.0.0.1 (one host per port) behind three proxies: a dead port, an HTTP
 * proxy and a SOCKS5 server, both wanting credentials and leaving from their own address
 * (127.0.0.2 and 127.0.0.3), so each site knows which proxy carried each request. Sites are added
 * until at least two hosts start on the dead proxy and both live proxies carry some hosts.
 */
export interface ProxyFixture {
  sites: ProxySite[];
  http: TestProxy;
  socks: TestProxy;
  dead: string;
  /** As given to the crawl: dead first, with credentials. */
  proxies: string[];
  /** Host → the (redacted) proxy it must use: its first live one in rendezvous order. */
  expected: Map<string, string>;
  seeds(): string[];
  /** Asserts routing, User-Agents and secrecy for the records of one crawl of every site. */
  check(records: PageRecord[], logs: string): void;
  close(): Promise<void>;
}

export async function startProxyFixture(): Promise<ProxyFixture> {
  const http = await startHttpProxy({
    localAddress: '127.0.0.2',
    auth: { user: 'crawler', pass: 'http-pw-9' },
  });
  const socks = await startSocks5Server({
    localAddress: '127.0.0.3',
    auth: { user: 'crawler', pass: 'socks-pw-7' },
  });
  // The dead proxy's port is held while the sites start, then let go: a site that took it (one
  // CI run) made the "dead" proxy a live web server, whose 404s for "/" ended two hosts' crawls.
  const deadPort = await holdPort();
  const dead = `http://crawler:dead-pw-5@127.0.0.1:${deadPort.port}`;
  const proxies = [dead, http.url, socks.url];
  const pool = proxies.map(normalizeProxyUrl);
  const firstLive = (host: string): string => rankProxies(host, pool).find((p) => p !== pool[0]) as string;
  const sites: ProxySite[] = [];
  for (;;) {
    sites.push(await startSite());
    const onDead = sites.filter((s) => rankProxies(s.host, pool)[0] === pool[0]).length;
    if (onDead >= 2 && new Set(sites.map((s) => firstLive(s.host))).size === 2 && sites.length >= 6) break;
    assert.ok(sites.length < 60, 'no spread of hosts found');
  }
  await deadPort.release();
  const expected = new Map(sites.map((s) => [s.host, redactProxyUrl(firstLive(s.host))]));
  const byAddress = new Map([
    ['127.0.0.2', redactProxyUrl(http.url)],
    ['127.0.0.3', redactProxyUrl(socks.url)],
  ]);
  return {
    sites,
    http,
    socks,
    dead,
    proxies,
    expected,
    seeds: () => sites.map((s) => `${s.origin}/`),
    check(records, logs) {
      const urls = new Set(records.map((r) => r.url));
      assert.equal(urls.size, sites.length * PAGES.length, 'every page recorded');
      for (const record of records) {
        assert.ok(pageRecordSchema.safeParse(record).success, record.url);
        assert.equal(record.outcome, 'ok', `${record.url}: ${record.error?.code}`);
        assert.equal(record.attempt, 1, `${record.url}: a dead proxy costs time, not attempts`);
        assert.equal(record.proxy, expected.get(new URL(record.url).host), record.url);
      }
      const seen = new Map<string, string>();
      for (const site of sites) {
        assert.ok(site.hits.length >= PAGES.length, `${site.host}: every page fetched`);
        for (const hit of site.hits) {
          assert.equal(
            byAddress.get(hit.from),
            expected.get(site.host),
            `${site.host}${hit.path} from ${hit.from}`,
          );
          seen.set(`${site.origin}${hit.path}`, hit.ua);
        }
      }
      assert.ok(http.targets.length > 0 && socks.targets.length > 0, 'both live proxies carried hosts');
      for (const record of records) {
        assert.ok(record.userAgent && USER_AGENTS.includes(record.userAgent), record.userAgent);
        assert.equal(seen.get(record.url), record.userAgent, `${record.url}: the UA the site saw`);
      }
      assert.deepEqual(new Set(records.map((r) => r.userAgent)), new Set(USER_AGENTS), 'every UA used');
      const everything = JSON.stringify(records) + logs;
      for (const secret of SECRETS) assert.ok(!everything.includes(secret), `${secret} leaked`);
    },
    close: async () => {
      for (const site of sites) site.server.close();
      await Promise.all([http.close(), socks.close()]);
    },
  };
}

/** `--proxy` and `--user-agent` arguments for the fixture. */
export function identityArgs(fixture: ProxyFixture): string[] {
  return [
    ...fixture.proxies.flatMap((p) => ['--proxy', p]),
    ...USER_AGENTS.flatMap((ua) => ['--user-agent', ua]),
  ];
}
