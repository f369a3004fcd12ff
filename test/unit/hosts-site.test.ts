import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHostsSite, type HostsSite } from '../../scripts/site/hosts-site.js';

const hosts = [
  { address: '127.0.0.2', latencyMs: 60, pages: 12 },
  { address: '127.0.0.3', latencyMs: 120, pages: 5 },
  { address: '127.0.0.4', latencyMs: 80, pages: 8 },
];

describe('the many-hosts bench site', () => {
  let site: HostsSite;
  before(async () => {
    site = await startHostsSite({
      hosts,
      politeness: { concurrency: 1, delayMs: 100, toleranceMs: 5 },
      seed: 3,
      pageBytes: 2048,
      linksPerPage: 10,
    });
  });
  after(() => site.close());

  test('each host answers after its own latency, on its own address', async () => {
    assert.deepEqual(
      site.urls.map((u) => new URL(u).hostname),
      hosts.map((h) => h.address),
    );
    for (const [i, url] of site.urls.entries()) {
      const startedAt = performance.now();
      const res = await fetch(url);
      assert.equal((await res.arrayBuffer()).byteLength, 2048);
      assert.ok(performance.now() - startedAt >= (hosts[i]?.latencyMs ?? 0) - 1);
    }
    assert.equal(await fetch(new URL('/p/5', site.urls[1])).then((r) => r.status), 404);
  });

  test('links reach every page of every host from the hosts’ roots, and cross hosts', async () => {
    site.resetStats();
    const origins = new Set(site.urls.map((u) => new URL(u).origin));
    const seen = new Set(site.urls);
    const queue = [...site.urls];
    let crossLinks = 0;
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      const html = await fetch(url).then((r) => r.text());
      for (const [, href] of html.matchAll(/<a href="([^"]*)"/g)) {
        const link = new URL(href ?? '', url);
        assert.ok(origins.has(link.origin), link.href);
        if (link.origin !== new URL(url).origin) crossLinks += 1;
        if (!seen.has(link.href)) {
          seen.add(link.href);
          queue.push(link.href);
        }
      }
    }
    assert.equal(seen.size, 12 + 5 + 8);
    assert.ok(crossLinks > 0);
    const stats = site.stats();
    assert.deepEqual(
      stats.hosts.map((h) => h.distinctPages),
      hosts.map((h) => h.pages),
    );
    assert.ok(stats.windowMs !== null && stats.windowMs > 0);
  });

  test('counts requests that break the politeness, per host', async () => {
    site.resetStats();
    const url = site.urls[0] as string;
    await Promise.all([fetch(url).then((r) => r.text()), fetch(url).then((r) => r.text())]);
    const [first, second] = site.stats().hosts;
    assert.equal(first?.requests, 2);
    assert.equal(first?.concurrencyViolations, 1);
    assert.equal(first?.delayViolations, 1);
    assert.equal(first?.maxInFlight, 2);
    assert.equal(second?.requests, 0);
  });
});
