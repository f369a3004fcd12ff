import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProxyPool, rankProxies, type ProxyPoolEvent } from '../../client/crawler/fetch/proxy-pool.js';
import { FakeClock } from '../helpers/fake-clock.js';

const PROXIES = [
  'http://user:secret@10.0.0.1:3128',
  'http://10.0.0.2:3128',
  'socks5://10.0.0.3:1080',
  'socks5h://u:p@10.0.0.4:1080',
];
const HOSTS = Array.from({ length: 40 }, (_, i) => `site-${i}.example:8${i}`);

function pool(options: { maxFailures?: number; cooloffMs?: number; minScore?: number } = {}) {
  const clock = new FakeClock();
  const events: ProxyPoolEvent[] = [];
  const p = new ProxyPool({
    proxies: PROXIES,
    maxFailures: options.maxFailures ?? 3,
    cooloffMs: options.cooloffMs ?? 60_000,
    ...(options.minScore === undefined ? {} : { minScore: options.minScore }),
    clock: clock.fn,
    onEvent: (e) => events.push(e),
  });
  return { pool: p, clock, events };
}

const first = (p: ProxyPool, host: string): string => {
  const pick = p.candidates(host)[0];
  assert.ok(pick, `a proxy for ${host}`);
  return pick.url;
};

/** A host whose sticky proxy is `url`. */
function hostOn(url: string): string {
  const host = HOSTS.find((h) => rankProxies(h, PROXIES)[0] === url);
  assert.ok(host, `some host ranks ${url} first`);
  return host;
}

describe('ProxyPool: per-host stickiness', () => {
  test('a host keeps its proxy, request after request, and hosts spread over every proxy', () => {
    const { pool: p } = pool();
    const used = new Set<string>();
    for (const host of HOSTS) {
      const sticky = first(p, host);
      for (let i = 0; i < 5; i++) {
        assert.ok(p.claim(sticky));
        p.report(sticky, 'ok');
        assert.equal(first(p, host), sticky, `${host} moved`);
      }
      used.add(sticky);
    }
    assert.equal(used.size, PROXIES.length, 'every proxy carries some hosts');
  });

  test('two pools (two crawler processes) agree on every host, whatever the list order', () => {
    const a = new ProxyPool({ proxies: PROXIES, maxFailures: 3, cooloffMs: 1000 });
    const b = new ProxyPool({ proxies: [...PROXIES].reverse(), maxFailures: 3, cooloffMs: 1000 });
    for (const host of HOSTS) assert.equal(first(a, host), first(b, host), host);
  });

  test('labels never carry credentials', () => {
    const { pool: p } = pool();
    const labels = HOSTS.flatMap((h) => p.candidates(h).map((c) => c.label));
    assert.ok(labels.includes('http://10.0.0.1:3128'));
    assert.ok(labels.includes('socks5h://10.0.0.4:1080'));
    assert.ok(labels.every((l) => !l.includes('secret') && !l.includes('@')));
    assert.ok(p.snapshot().every((s) => !s.proxy.includes('@')));
  });
});

describe('ProxyPool: health and retirement', () => {
  test('N proxy failures in a row retire a proxy; only its hosts move, each to its next proxy', () => {
    const { pool: p, events } = pool({ maxFailures: 3 });
    const dead = PROXIES[0] as string;
    const before = new Map(HOSTS.map((h) => [h, first(p, h)]));
    for (let i = 0; i < 2; i++) {
      assert.ok(p.claim(dead));
      p.report(dead, 'proxy-failure');
      assert.equal(p.snapshot()[0]?.state, 'healthy', `still in service after ${i + 1} failures`);
    }
    p.report(dead, 'proxy-failure');
    assert.equal(p.snapshot()[0]?.state, 'retired');
    assert.deepEqual(
      events.map((e) => e.type),
      ['retired'],
    );
    const retired = events[0];
    assert.ok(retired?.type === 'retired');
    assert.equal(retired.proxy, 'http://10.0.0.1:3128', 'redacted in events');
    assert.equal(retired.consecutiveFailures, 3);
    for (const host of HOSTS) {
      const was = before.get(host) as string;
      const now = first(p, host);
      if (was === dead)
        assert.equal(now, rankProxies(host, PROXIES)[1], `${host} moved to its second choice`);
      else assert.equal(now, was, `${host} was not on the dead proxy and must not move`);
      assert.ok(!p.candidates(host).some((c) => c.url === dead));
    }
    assert.equal(p.claim(dead), false, 'a retired proxy cannot be claimed');
  });

  test('a success resets the count: failures must be consecutive', () => {
    const { pool: p } = pool({ maxFailures: 3 });
    const proxy = PROXIES[1] as string;
    for (let i = 0; i < 10; i++) {
      p.report(proxy, 'proxy-failure');
      p.report(proxy, 'proxy-failure');
      p.report(proxy, 'ok');
    }
    assert.equal(p.snapshot()[1]?.state, 'healthy');
  });

  test('target-level trouble (unclear) never counts against a proxy', () => {
    const { pool: p } = pool({ maxFailures: 2 });
    const proxy = PROXIES[2] as string;
    for (let i = 0; i < 20; i++) p.report(proxy, 'unclear');
    const status = p.snapshot()[2];
    assert.equal(status?.state, 'healthy');
    assert.equal(status?.score, 1);
    assert.equal(status?.consecutiveFailures, 0);
  });

  test('the health score decays with failures, recovers with successes, and retires a flapping proxy', () => {
    const { pool: p } = pool({ maxFailures: 100, minScore: 0.25 });
    const proxy = PROXIES[3] as string;
    p.report(proxy, 'proxy-failure');
    assert.ok(Math.abs((p.snapshot()[3]?.score ?? 0) - 0.8) < 1e-9);
    p.report(proxy, 'ok');
    assert.ok(Math.abs((p.snapshot()[3]?.score ?? 0) - 0.84) < 1e-9);
    // Three failures to one success: never N in a row, but mostly failing.
    let rounds = 0;
    while (p.snapshot()[3]?.state === 'healthy' && rounds < 50) {
      p.report(proxy, 'proxy-failure');
      p.report(proxy, 'proxy-failure');
      p.report(proxy, 'proxy-failure');
      p.report(proxy, 'ok');
      rounds += 1;
    }
    assert.equal(p.snapshot()[3]?.state, 'retired', 'retired by its score');
    assert.ok(rounds < 10, `took ${rounds} rounds`);
  });
});

describe('ProxyPool: re-admission after a cool-off probe', () => {
  test('after the cool-off one request probes; success re-admits and the hosts come back', () => {
    const { pool: p, clock, events } = pool({ maxFailures: 1, cooloffMs: 60_000 });
    const proxy = PROXIES[0] as string;
    const host = hostOn(proxy);
    p.report(proxy, 'proxy-failure');
    assert.notEqual(first(p, host), proxy);
    assert.equal(p.nextProbeInMs(), 60_000);
    clock.advance(59_999);
    assert.notEqual(first(p, host), proxy, 'still resting');
    clock.advance(1);
    assert.equal(first(p, host), proxy, 'offered again after the cool-off');
    assert.equal(p.snapshot()[0]?.state, 'probation');
    assert.ok(p.claim(proxy), 'the probe');
    assert.equal(p.claim(proxy), false, 'one probe at a time');
    assert.notEqual(first(p, host), proxy, 'while the probe is out, the host uses its next proxy');
    p.report(proxy, 'ok');
    assert.equal(p.snapshot()[0]?.state, 'healthy');
    assert.equal(first(p, host), proxy, 'the host is back on its proxy');
    assert.ok(p.claim(proxy) && p.claim(proxy), 'healthy proxies are claimed freely');
    assert.deepEqual(
      events.map((e) => e.type),
      ['retired', 'probing', 'readmitted'],
    );
  });

  test('a failed probe retires it again at once, for twice as long, up to the cap', () => {
    const { pool: p, clock } = pool({ maxFailures: 3, cooloffMs: 1_000 });
    const proxy = PROXIES[1] as string;
    const host = hostOn(proxy);
    for (let i = 0; i < 3; i++) p.report(proxy, 'proxy-failure');
    const rests: number[] = [];
    for (let i = 0; i < 7; i++) {
      rests.push(p.nextProbeInMs() ?? -1);
      clock.advance(p.nextProbeInMs() ?? 0);
      assert.equal(first(p, host), proxy);
      assert.ok(p.claim(proxy));
      p.report(proxy, 'proxy-failure');
      assert.equal(p.snapshot()[1]?.state, 'retired', 'one failed probe is enough');
    }
    assert.deepEqual(rests, [1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000]);
    clock.advance(16_000);
    p.candidates(host);
    assert.ok(p.claim(proxy));
    p.report(proxy, 'ok');
    for (let i = 0; i < 3; i++) p.report(proxy, 'proxy-failure');
    assert.equal(p.nextProbeInMs(), 1_000, 'a success ends the streak: the next rest is the first again');
  });

  test('with every proxy retired, nothing is offered and the next probe time is known', () => {
    const { pool: p, clock } = pool({ maxFailures: 1, cooloffMs: 5_000 });
    for (const [i, proxy] of PROXIES.entries()) {
      clock.advance(1_000);
      p.report(proxy, 'proxy-failure');
      assert.equal(p.snapshot()[i]?.state, 'retired');
    }
    assert.deepEqual(p.candidates('any.example'), []);
    assert.equal(p.nextProbeInMs(), 2_000, 'the first retired is due first');
  });

  test('a late failure from a request that started before retirement changes nothing', () => {
    const { pool: p, clock } = pool({ maxFailures: 1, cooloffMs: 10_000 });
    const proxy = PROXIES[2] as string;
    p.report(proxy, 'proxy-failure');
    clock.advance(5_000);
    p.report(proxy, 'proxy-failure');
    assert.equal(p.nextProbeInMs(), 5_000, 'the rest is not extended');
  });
});
