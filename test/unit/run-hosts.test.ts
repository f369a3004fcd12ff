import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { RecentHosts } from '../../scheduler/runs/recent-hosts.js';
import { runHosts } from '../../scheduler/runs/run-hosts.js';

const NOW = Date.UTC(2026, 0, 1);

describe('runHosts: a run’s busiest hosts', () => {
  test('in flight first, then queued, then recently active; cooling-down ones show their pause', () => {
    const gate = new HostGate({ ...DEFAULT_POLITENESS, concurrency: 2, delayMs: 0 }, { random: () => 0 });
    gate.start('busy.test', NOW);
    const recent = new RecentHosts();
    recent.record('old.test', NOW - 5_000);
    recent.record('cool.test', NOW - 1_000);
    gate.finish('cool.test', NOW - 1_000, { status: 429, responseMs: 5, retryAfterMs: 30_000 });
    const held = new Map([
      ['busy.test', { inFlight: 1, queued: 0 }],
      ['waiting.test', { inFlight: 0, queued: 3 }],
    ]);
    const items = runHosts({ held, recent, gate, now: NOW, limit: 10 });
    assert.deepEqual(
      items.map((h) => h.host),
      ['busy.test', 'waiting.test', 'cool.test', 'old.test'],
    );
    const [busy, waiting, cool] = items;
    assert.equal(busy?.inFlight, 1);
    assert.equal(busy?.concurrency, 2);
    assert.equal(waiting?.queued, 3);
    assert.equal(cool?.pausedUntil, new Date(NOW - 1_000 + 30_000).toISOString());
    assert.match(String(cool?.pauseReason), /HTTP 429/);
    assert.equal(cool?.nextStartAt, cool?.pausedUntil);
    assert.equal(cool?.fetched, 1);
    assert.equal(busy?.nextStartAt, null, 'no delay: the next request may start at once');
    assert.deepEqual(
      runHosts({ held, recent, gate, now: NOW, limit: 2 }).map((h) => h.host),
      ['busy.test', 'waiting.test'],
    );
  });

  test('the recent list is bounded: the least recently active host goes first', () => {
    const recent = new RecentHosts(2);
    recent.record('a.test', 1);
    recent.record('b.test', 2);
    recent.record('a.test', 3);
    recent.record('c.test', 4);
    assert.deepEqual(
      recent.entries().map(([host, seen]) => [host, seen.fetched]),
      [
        ['c.test', 1],
        ['a.test', 2],
      ],
    );
  });
});
