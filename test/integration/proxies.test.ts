import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { createFetcherFactory } from '../../client/crawler/fetch/fetcher-factory.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { createProxyAgents } from '../../client/crawler/fetch/proxy-agents.js';
import { ProxyPool, rankProxies, type ProxyPoolEvent } from '../../client/crawler/fetch/proxy-pool.js';
import {
  RoutedFetchError,
  RoutedFetcher,
  type RoutedPage,
} from '../../client/crawler/fetch/routed-fetcher.js';
import type { LookupAll } from '../../client/crawler/fetch/target-guard.js';
import { createUserAgentRotation } from '../../client/crawler/fetch/user-agents.js';
import { silentLogger } from '../../shared/logger.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { freePort } from '../helpers/ports.js';
import { startHttpProxy, startSocks5Server, type TestProxy } from '../helpers/proxies.js';

const SETTINGS: FetchSettings = {
  userAgent: 'ackcrawl-test/identity',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  totalTimeoutMs: 5_000,
  maxRedirects: 3,
  maxBodyBytes: 1024 * 1024,
  allowPrivate: true,
};

interface Hit {
  path: string;
  ua: string;
  /** The address the request came from: each proxy leaves from its own (127.0.0.2, …). */
  from: string;
}

interface Site {
  origin: string;
  host: string;
  hits: Hit[];
  server: Server;
}

async function startSite(): Promise<Site> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    hits.push({
      path: req.url ?? '',
      ua: req.headers['user-agent'] ?? '',
      from: req.socket.remoteAddress ?? '',
    });
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<p>ok</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, hits, server };
}

function routed(options: {
  proxies: string[];
  settings?: Partial<FetchSettings>;
  maxFailures?: number;
  cooloffMs?: number;
  clock?: FakeClock;
  lookup?: LookupAll;
  events?: ProxyPoolEvent[];
}): { fetcher: RoutedFetcher; pool: ProxyPool; agents: Map<string, Agents> } {
  const settings = { ...SETTINGS, ...options.settings };
  const pool = new ProxyPool({
    proxies: options.proxies,
    maxFailures: options.maxFailures ?? 3,
    cooloffMs: options.cooloffMs ?? 60_000,
    ...(options.clock ? { clock: options.clock.fn } : {}),
    onEvent: (e) => options.events?.push(e),
  });
  const agents = new Map<string, Agents>();
  const fetcher = new RoutedFetcher({
    fetcher: new Fetcher(settings, createAgents({ allowPrivate: settings.allowPrivate })),
    userAgent: createUserAgentRotation(settings),
    pool,
    agentsFor: (url) => {
      let a = agents.get(url);
      if (!a) {
        a = createProxyAgents(url, {
          allowPrivate: settings.allowPrivate,
          connectTimeoutMs: settings.connectTimeoutMs,
          maxSockets: 8,
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
        agents.set(url, a);
      }
      return a;
    },
  });
  return { fetcher, pool, agents };
}

function destroy(agents: Map<string, Agents>): void {
  for (const a of agents.values()) {
    a.http.destroy();
    a.https.destroy();
  }
}

async function failure(promise: Promise<RoutedPage>): Promise<RoutedFetchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RoutedFetchError, `a RoutedFetchError, got ${String(err)}`);
    return err;
  }
  assert.fail('the fetch should have failed');
}

/** A loopback port that refuses connections: a dead proxy. */
async function deadProxyUrl(scheme = 'http'): Promise<string> {
  return `${scheme}://127.0.0.1:${await freePort()}`;
}

describe('requests through local HTTP and SOCKS5 proxies', () => {
  const sites: Site[] = [];
  let httpA: TestProxy;
  let httpB: TestProxy;
  let socks: TestProxy;
  /** Which proxy a request came through, by the address it left from. */
  const byAddress = new Map<string, string>();

  before(async () => {
    for (let i = 0; i < 12; i++) sites.push(await startSite());
    httpA = await startHttpProxy({ localAddress: '127.0.0.2' });
    httpB = await startHttpProxy({ localAddress: '127.0.0.3' });
    socks = await startSocks5Server({ localAddress: '127.0.0.4' });
    byAddress.set('127.0.0.2', httpA.url).set('127.0.0.3', httpB.url).set('127.0.0.4', socks.url);
  });
  after(async () => {
    for (const site of sites) site.server.close();
    await Promise.all([httpA.close(), httpB.close(), socks.close()]);
  });
  /** Starts sites until `ok` holds for them (ports are random, so the hash spread is too). */
  const sitesUntil = async (ok: (all: Site[]) => boolean): Promise<void> => {
    while (!ok(sites)) {
      assert.ok(sites.length < 80, 'could not find hosts with the wanted spread');
      sites.push(await startSite());
    }
  };
  const reset = (): void => {
    for (const site of sites) site.hits.length = 0;
    for (const p of [httpA, httpB, socks]) p.targets.length = 0;
  };

  test('every request goes through a proxy, and a host keeps its proxy (HTTP and SOCKS5 alike)', async () => {
    reset();
    const proxies = [httpA.url, httpB.url, socks.url];
    await sitesUntil((all) => proxies.every((p) => all.some((s) => rankProxies(s.host, proxies)[0] === p)));
    const { fetcher, agents } = routed({ proxies });
    try {
      for (let round = 0; round < 3; round++) {
        for (const site of sites) {
          const page = await fetcher.fetch(`${site.origin}/p${round}`);
          assert.equal(page.status, 200);
          assert.equal(page.via.proxy, redactProxyUrl(rankProxies(site.host, proxies)[0] as string));
        }
      }
      const used = new Set<string>();
      for (const site of sites) {
        assert.equal(site.hits.length, 3);
        const from = new Set(site.hits.map((h) => h.from));
        assert.equal(from.size, 1, `${site.host} came through ${[...from].join(', ')}`);
        const address = [...from][0] as string;
        assert.ok(
          byAddress.has(address),
          `${site.host} was reached directly (${address}), not through a proxy`,
        );
        assert.equal(byAddress.get(address), rankProxies(site.host, proxies)[0], 'the rendezvous choice');
        used.add(address);
      }
      assert.equal(used.size, 3, 'the hosts spread over both HTTP proxies and the SOCKS server');
      const total = httpA.targets.length + httpB.targets.length;
      const viaHttp = sites.filter((s) => s.hits[0]?.from !== '127.0.0.4').length * 3;
      assert.equal(total, viaHttp, 'the HTTP proxies forwarded exactly their hosts’ requests');
      assert.ok(socks.targets.length >= 1, 'the SOCKS server opened tunnels');
      assert.ok(socks.targets.every((t) => sites.some((s) => s.host === t)));
    } finally {
      destroy(agents);
    }
  });

  test('a dead proxy is retired after N failures, its hosts move on, and no request is lost', async () => {
    reset();
    const dead = await deadProxyUrl();
    const proxies = [dead, httpA.url, socks.url];
    await sitesUntil((all) => all.some((s) => rankProxies(s.host, proxies)[0] === dead));
    const onDead = sites.filter((s) => rankProxies(s.host, proxies)[0] === dead);
    const events: ProxyPoolEvent[] = [];
    const { fetcher, pool, agents } = routed({ proxies, maxFailures: 3, events });
    try {
      const pages: RoutedPage[] = [];
      for (let round = 0; round < 4; round++) {
        for (const site of onDead) pages.push(await fetcher.fetch(`${site.origin}/r${round}`));
      }
      assert.ok(
        pages.every((p) => p.status === 200),
        'every fetch ended ok',
      );
      for (const site of onDead) {
        const next = rankProxies(site.host, proxies)[1] as string;
        assert.ok(
          site.hits.every((h) => byAddress.get(h.from) === next),
          `${site.host} moved to its next proxy and stayed`,
        );
        assert.equal(site.hits.length, 4, 'each request reached the site once');
      }
      const retired = events.filter((e) => e.type === 'retired');
      assert.equal(retired.length, 1);
      assert.equal(retired[0]?.type === 'retired' && retired[0].consecutiveFailures, 3);
      assert.equal(retired[0]?.proxy, redactProxyUrl(dead));
      assert.equal(pool.snapshot()[0]?.state, 'retired');
    } finally {
      destroy(agents);
    }
  });

  test('after its cool-off a revived proxy is probed, re-admitted, and gets its hosts back', async () => {
    reset();
    const port = await freePort();
    const revived = `http://127.0.0.1:${port}`;
    const proxies = [revived, socks.url];
    await sitesUntil((all) => all.some((s) => rankProxies(s.host, proxies)[0] === revived));
    const site = sites.find((s) => rankProxies(s.host, proxies)[0] === revived);
    assert.ok(site, 'a host that prefers the proxy that will come back');
    const clock = new FakeClock();
    const events: ProxyPoolEvent[] = [];
    const { fetcher, agents } = routed({ proxies, maxFailures: 1, cooloffMs: 30_000, clock, events });
    let proxy: TestProxy | null = null;
    try {
      assert.equal((await fetcher.fetch(`${site.origin}/1`)).via.proxy, redactProxyUrl(socks.url));
      proxy = await startHttpProxy({ localAddress: '127.0.0.5', port });
      assert.equal((await fetcher.fetch(`${site.origin}/2`)).via.proxy, redactProxyUrl(socks.url), 'resting');
      clock.advance(30_000);
      assert.equal((await fetcher.fetch(`${site.origin}/3`)).via.proxy, redactProxyUrl(revived), 'probe');
      assert.equal((await fetcher.fetch(`${site.origin}/4`)).via.proxy, redactProxyUrl(revived), 'back');
      assert.deepEqual(
        site.hits.map((h) => h.from),
        ['127.0.0.4', '127.0.0.4', '127.0.0.5', '127.0.0.5'],
      );
      assert.deepEqual(
        events.map((e) => e.type),
        ['retired', 'probing', 'readmitted'],
      );
    } finally {
      destroy(agents);
      await proxy?.close();
    }
  });

  test('with every proxy retired the fetch fails retriably with NO_HEALTHY_PROXY', async () => {
    const dead = await deadProxyUrl('socks5');
    const { fetcher, agents } = routed({ proxies: [dead], maxFailures: 1, cooloffMs: 45_000 });
    try {
      const first = await failure(fetcher.fetch(`${sites[0]?.origin}/x`));
      assert.equal(first.code, 'PROXY_CONNECT_FAILED');
      assert.equal(first.retriable, true);
      assert.equal(first.via.proxy, redactProxyUrl(dead));
      const second = await failure(fetcher.fetch(`${sites[0]?.origin}/y`));
      assert.equal(second.code, 'NO_HEALTHY_PROXY');
      assert.equal(second.retriable, true);
      assert.ok((second.retryAfterMs ?? 0) > 40_000, `retry after the cool-off, not ${second.retryAfterMs}`);
    } finally {
      destroy(agents);
    }
  });

  test('a proxy that accepts but never answers its handshake times out as a proxy failure', async () => {
    const silent = createNetServer(() => undefined);
    const held = new Set<Socket>();
    silent.on('connection', (socket: Socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `socks5://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const { fetcher, pool, agents } = routed({
      proxies: [silentUrl, httpA.url],
      maxFailures: 1,
      settings: { connectTimeoutMs: 300 },
    });
    try {
      await sitesUntil((all) =>
        all.some((s) => rankProxies(s.host, [silentUrl, httpA.url])[0] === silentUrl),
      );
      const onSilent = sites.find(
        (s) => rankProxies(s.host, [silentUrl, httpA.url])[0] === silentUrl,
      ) as Site;
      const started = Date.now();
      const page = await fetcher.fetch(`${onSilent.origin}/silent`);
      assert.equal(page.via.proxy, redactProxyUrl(httpA.url), 'moved on to the next proxy');
      assert.ok(Date.now() - started < 2_000, 'within about the connect timeout');
      assert.equal(pool.snapshot()[0]?.state, 'retired');
    } finally {
      destroy(agents);
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  test('https targets go through a CONNECT tunnel (or SOCKS); a TLS failure there is not the proxy’s', async () => {
    reset();
    const site = sites[4] as Site;
    for (const proxy of [httpA, socks]) {
      const { fetcher, pool, agents } = routed({ proxies: [proxy.url], maxFailures: 1 });
      try {
        // The site speaks plain HTTP, so the TLS handshake through the tunnel fails at the target.
        const err = await failure(fetcher.fetch(`https://${site.host}/tls`));
        assert.ok(!err.code.startsWith('PROXY_'), `${proxy.url}: ${err.code} blamed the proxy`);
        assert.equal(err.via.proxy, redactProxyUrl(proxy.url));
        assert.equal(proxy.targets.at(-1), site.host, 'the proxy was asked for a tunnel to the site');
        assert.equal(pool.snapshot()[0]?.state, 'healthy');
      } finally {
        destroy(agents);
      }
    }
  });

  test('onRequestSent fires once, for the request that went out, not for a refused proxy', async () => {
    const dead = await deadProxyUrl();
    const proxies = [dead, httpA.url];
    await sitesUntil((all) => all.some((s) => rankProxies(s.host, proxies)[0] === dead));
    const site = sites.find((s) => rankProxies(s.host, proxies)[0] === dead) as Site;
    const { fetcher, agents } = routed({ proxies, maxFailures: 5 });
    try {
      let sent = 0;
      const page = await fetcher.fetch(`${site.origin}/sent`, { onRequestSent: () => (sent += 1) });
      assert.equal(page.via.proxy, redactProxyUrl(httpA.url), 'failed over');
      assert.equal(sent, 1);
    } finally {
      destroy(agents);
    }
  });

  test('the User-Agent rotates through the list, one per request, and is recorded', async () => {
    reset();
    const list = ['ua-one/1', 'ua-two/2', 'ua-three/3'];
    const { fetcher, agents } = routed({ proxies: [httpA.url], settings: { userAgents: list } });
    try {
      const site = sites[0] as Site;
      const sent: string[] = [];
      for (let i = 0; i < 7; i++) sent.push((await fetcher.fetch(`${site.origin}/ua${i}`)).via.userAgent);
      const seen = site.hits.map((h) => h.ua);
      assert.deepEqual(seen, [...list, ...list, list[0]]);
      assert.deepEqual(sent, seen, 'the record names the User-Agent the site saw');
    } finally {
      destroy(agents);
    }
  });

  test('credentials: an HTTP proxy that wants them gets them; a wrong password is a proxy failure (407)', async () => {
    const guarded = await startHttpProxy({
      localAddress: '127.0.0.6',
      auth: { user: 'crawl', pass: 's3cret' },
    });
    const wrong = guarded.url.replace('s3cret', 'nope');
    const site = sites[1] as Site;
    const good = routed({ proxies: [guarded.url] });
    const bad = routed({ proxies: [wrong], maxFailures: 1 });
    try {
      const page = await good.fetcher.fetch(`${site.origin}/auth`);
      assert.equal(page.status, 200);
      assert.equal(page.via.proxy, `http://127.0.0.1:${guarded.port}`, 'no credentials in the record');
      const err = await failure(bad.fetcher.fetch(`${site.origin}/auth-bad`));
      assert.equal(err.code, 'PROXY_AUTH_FAILED');
      assert.equal(err.retriable, true);
      assert.ok(!err.message.includes('nope') && !err.message.includes('s3cret'));
      assert.equal(bad.pool.snapshot()[0]?.state, 'retired');
    } finally {
      destroy(good.agents);
      destroy(bad.agents);
      await guarded.close();
    }
  });

  test('credentials: a SOCKS5 server with user/password', async () => {
    const guarded = await startSocks5Server({ localAddress: '127.0.0.7', auth: { user: 'u1', pass: 'p1' } });
    const { fetcher, agents } = routed({ proxies: [guarded.url] });
    try {
      const site = sites[2] as Site;
      const page = await fetcher.fetch(`${site.origin}/socks-auth`);
      assert.equal(page.status, 200);
      assert.equal(site.hits.at(-1)?.from, '127.0.0.7');
      assert.equal(page.via.proxy, `socks5://127.0.0.1:${guarded.port}`);
    } finally {
      destroy(agents);
      await guarded.close();
    }
  });
});

describe('the address check before a proxy (SSRF)', () => {
  let socks: TestProxy;
  let http: TestProxy;
  before(async () => {
    socks = await startSocks5Server({ refuseTargets: true });
    http = await startHttpProxy();
  });
  after(async () => Promise.all([socks.close(), http.close()]));

  const lookup: LookupAll = (host) =>
    Promise.resolve(
      host === 'intranet.test'
        ? [{ address: '10.1.2.3', family: 4 }]
        : host === 'sneaky.test'
          ? [
              { address: '93.184.216.34', family: 4 },
              { address: '169.254.169.254', family: 4 },
            ]
          : [{ address: '93.184.216.34', family: 4 }],
    );

  for (const [name, url] of [
    ['a loopback literal', 'http://127.0.0.1:9/'],
    ['a name that resolves to a private address', 'http://intranet.test/'],
    ['a name with one metadata address among public ones', 'http://sneaky.test/'],
    ['an IPv6 loopback literal', 'http://[::1]:9/'],
  ] as const) {
    test(`refuses ${name} before the proxy sees anything`, async () => {
      for (const proxy of [http, socks]) {
        const before = proxy.connections;
        const { fetcher, pool, agents } = routed({
          proxies: [proxy.url],
          settings: { allowPrivate: false },
          lookup,
        });
        try {
          const err = await failure(fetcher.fetch(url));
          assert.equal(err.code, 'ADDRESS_BLOCKED');
          assert.equal(err.retriable, false);
          assert.equal(proxy.connections, before, 'the proxy was never contacted');
          assert.equal(pool.snapshot()[0]?.state, 'healthy', 'not the proxy’s fault');
        } finally {
          destroy(agents);
        }
      }
    });
  }

  test('a public target passes; socks5:// is given the checked address, socks5h:// the name', async () => {
    for (const [scheme, want] of [
      ['socks5', '93.184.216.34:80'],
      ['socks5h', 'public.test:80'],
    ] as const) {
      const { fetcher, pool, agents } = routed({
        proxies: [socks.url.replace('socks5', scheme)],
        settings: { allowPrivate: false },
        lookup,
      });
      try {
        // The test SOCKS server refuses every target: nothing leaves this machine.
        const err = await failure(fetcher.fetch('http://public.test/'));
        assert.equal(err.code, 'CONNECTION_REFUSED', 'the target refused (REP 5), not the proxy');
        assert.equal(socks.targets.at(-1), want);
        assert.equal(pool.snapshot()[0]?.state, 'healthy');
        assert.equal(pool.snapshot()[0]?.consecutiveFailures, 0);
      } finally {
        destroy(agents);
      }
    }
  });
});

describe('createFetcherFactory', () => {
  test('keeps the pool (and its health) while the proxy list stays, and goes direct without one', async () => {
    const site = await startSite();
    const proxy = await startHttpProxy({ localAddress: '127.0.0.8' });
    try {
      const factory = createFetcherFactory({ maxSockets: 4, logger: silentLogger() });
      const withProxy = { ...SETTINGS, proxies: [proxy.url] };
      const a = factory(withProxy);
      assert.equal(factory(withProxy), a, 'same settings, same fetcher');
      assert.equal((await a.fetch(`${site.origin}/1`)).via.proxy, redactProxyUrl(proxy.url));
      const direct = factory(SETTINGS);
      const page = await direct.fetch(`${site.origin}/2`);
      assert.equal(page.via.proxy, null);
      assert.equal(page.via.userAgent, SETTINGS.userAgent);
      assert.deepEqual(
        site.hits.map((h) => h.from),
        ['127.0.0.8', '127.0.0.1'],
      );
    } finally {
      site.server.close();
      await proxy.close();
    }
  });
});
