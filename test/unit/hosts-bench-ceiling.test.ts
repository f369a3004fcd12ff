import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { crawlCeiling, hostMakespanMs, hostRate } from '../../scripts/bench/hosts/ceiling.js';
import { planHosts } from '../../scripts/bench/hosts/plan.js';

describe('many-hosts bench ceiling', () => {
  test('a host is held by its latency or by the delay, whichever is slower', () => {
    const p = { concurrency: 1, delayMs: 150 };
    assert.equal(hostRate(100, p), 1000 / 150);
    assert.equal(hostRate(200, p), 5);
    assert.equal(hostRate(200, { concurrency: 2, delayMs: 0 }), 10);
    assert.equal(hostRate(0, { concurrency: 1, delayMs: 0 }), Infinity);
  });

  test('one host: n starts a delay apart, or n/C rounds of its latency, plus the last response', () => {
    assert.equal(
      hostMakespanMs({ latencyMs: 100, pages: 10 }, { concurrency: 1, delayMs: 150 }),
      9 * 150 + 100,
    );
    assert.equal(hostMakespanMs({ latencyMs: 200, pages: 10 }, { concurrency: 1, delayMs: 150 }), 10 * 200);
    assert.equal(hostMakespanMs({ latencyMs: 200, pages: 5 }, { concurrency: 2, delayMs: 0 }), 3 * 200);
    assert.equal(hostMakespanMs({ latencyMs: 200, pages: 0 }, { concurrency: 2, delayMs: 0 }), 0);
  });

  test('the slowest host bounds the crawl, unless the total concurrency is smaller', () => {
    const p = { concurrency: 1, delayMs: 0 };
    const hosts = [
      { latencyMs: 100, pages: 10 },
      { latencyMs: 200, pages: 5 },
    ];
    const free = crawlCeiling(hosts, p, 100);
    assert.equal(free.bound, 'politeness');
    assert.equal(free.makespanMs, 1000);
    assert.equal(free.pagesPerSecond, 15);
    assert.equal(free.steadyPagesPerSecond, 15);
    // One request in flight at a time: every page's latency one after the other.
    const narrow = crawlCeiling(hosts, p, 1);
    assert.equal(narrow.bound, 'total concurrency');
    assert.equal(narrow.makespanMs, 2000);
    assert.equal(narrow.pagesPerSecond, 7.5);
  });
});

describe('many-hosts bench plan', () => {
  const options = {
    hosts: 128,
    pages: 16_000,
    seed: 1,
    minLatencyMs: 50,
    maxLatencyMs: 200,
    politeness: { concurrency: 1, delayMs: 150 },
  };

  test('is deterministic, with distinct loopback addresses and latencies spread over the range', () => {
    const hosts = planHosts(options);
    assert.deepEqual(planHosts(options), hosts);
    assert.notDeepEqual(
      planHosts({ ...options, seed: 2 }).map((h) => h.latencyMs),
      hosts.map((h) => h.latencyMs),
    );
    assert.equal(new Set(hosts.map((h) => h.address)).size, 128);
    assert.equal(hosts[0]?.address, '127.0.0.2');
    const latencies = hosts.map((h) => h.latencyMs).sort((a, b) => a - b);
    assert.ok((latencies[0] as number) >= 50 && (latencies.at(-1) as number) <= 200);
    assert.ok((latencies[0] as number) < 52 && (latencies.at(-1) as number) > 198);
  });

  test('gives each host pages in proportion to its polite rate, so all can finish together', () => {
    const hosts = planHosts(options);
    const total = hosts.reduce((n, h) => n + h.pages, 0);
    assert.ok(Math.abs(total - options.pages) < hosts.length, `${total} pages`);
    const seconds = hosts.map((h) => h.pages / hostRate(h.latencyMs, options.politeness));
    assert.ok(Math.max(...seconds) - Math.min(...seconds) < 0.2, 'each host needs the same time, ± one page');
    const ceiling = crawlCeiling(hosts, options.politeness, 256);
    assert.equal(ceiling.bound, 'politeness');
    assert.ok(
      Math.abs(ceiling.pagesPerSecond - ceiling.steadyPagesPerSecond) / ceiling.steadyPagesPerSecond < 0.02,
    );
  });
});
