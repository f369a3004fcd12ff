import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostGate, type HostGateDeps } from '../../scheduler/politeness/host-gate.js';
import {
  DEFAULT_POLITENESS,
  startMarginMs,
  type PolitenessSettings,
} from '../../scheduler/politeness/politeness-settings.js';
import { parseHostRules } from '../../shared/politeness/host-rules.js';

const gateWith = (settings: Partial<PolitenessSettings>, deps: HostGateDeps = {}): HostGate =>
  new HostGate({ ...DEFAULT_POLITENESS, ...settings }, deps);

/** Delay as the gate enforces it: the delay plus the dispatch margin. */
const gap = (delayMs: number): number => delayMs + startMarginMs(delayMs);

describe('HostGate', () => {
  test('a host never seen may start at once', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 1_000 });
    assert.equal(gate.waitMs('a.test', 0), 0);
    assert.equal(gate.inFlight('a.test'), 0);
  });

  test('at least delayMs (plus a small dispatch margin) between two starts to a host', () => {
    assert.equal(startMarginMs(0), 0);
    assert.equal(startMarginMs(500), 50);
    assert.equal(startMarginMs(50), 10);
    assert.equal(startMarginMs(60_000), 100);
    const gate = gateWith({ concurrency: 5, delayMs: 500 });
    gate.start('a.test', 10_000);
    gate.reportStart('a.test', 10_000);
    assert.equal(gate.waitMs('a.test', 10_000), 550);
    assert.equal(gate.waitMs('a.test', 10_200), 350);
    assert.equal(gate.waitMs('a.test', 10_550), 0);
    assert.equal(gate.waitMs('a.test', 99_999), 0);
    gate.start('a.test', 10_550);
    gate.reportStart('a.test', 10_550);
    assert.equal(gate.waitMs('a.test', 10_550), 550);
  });

  test('a request written again (stale socket, next proxy) counts the delay from that write; never earlier', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 500 });
    gate.start('a.test', 10_000);
    gate.reportStart('a.test', 10_000);
    gate.reportResend('a.test', 10_300);
    assert.equal(gate.waitMs('a.test', 10_300), gap(500));
    assert.equal(gate.inFlight('a.test'), 1, 'still one request in flight');
    gate.reportResend('a.test', 10_100);
    assert.equal(gate.waitMs('a.test', 10_300), gap(500), 'an older write does not bring it forward');
    gate.reportResend('never.test', 10_000);
    assert.equal(gate.waitMs('never.test', 10_000), 0, 'a host with nothing in flight is untouched');
  });

  test('a redirect back to a host (a hop) goes before its new requests, its delay after the last start', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 500 });
    gate.start('a.test', 10_000);
    gate.reportStart('a.test', 10_000);
    gate.holdForHop('a.test');
    assert.equal(gate.hopWaitMs('a.test', 10_100), gap(500) - 100);
    assert.equal(gate.waitMs('a.test', 20_000), Infinity, 'no new request while the hop waits');
    gate.grantHop('a.test', 10_000 + gap(500));
    assert.equal(gate.inFlight('a.test'), 1, 'the hop holds its task’s slot, no other');
    assert.equal(gate.waitMs('a.test', 20_000), Infinity, 'until the hop’s write is reported');
    gate.reportStart('a.test', 10_600);
    assert.equal(gate.waitMs('a.test', 10_600), gap(500), 'the next request waits its delay after the hop');
    // A full host: the hop's task has its slot already.
    gate.start('a.test', 11_200);
    gate.reportStart('a.test', 11_200);
    gate.holdForHop('a.test');
    assert.equal(gate.hopWaitMs('a.test', 11_200 + gap(500)), 0, 'concurrency does not hold a hop');
    gate.dropHop('a.test');
    assert.equal(gate.waitMs('a.test', 11_200 + gap(500)), Infinity, 'dropped; the host is full again');
    gate.finish('a.test', 11_800);
    assert.equal(gate.waitMs('a.test', 11_800), 0);
  });

  test('hosts taken over from another scheduler wait their delay from the handover, others do not', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 500 });
    gate.start('known.test', 9_000);
    gate.reportStart('known.test', 9_000);
    gate.assumeStarted((host) => host.startsWith('moved') || host === 'known.test', 10_000);
    assert.equal(gate.waitMs('moved.test', 10_000), gap(500), 'never seen here, moved: one delay');
    assert.equal(gate.waitMs('moved.test', 10_000 + gap(500)), 0);
    assert.equal(
      gate.waitMs('known.test', 10_100),
      gap(500) - 100,
      'the handover counts over an older start',
    );
    assert.equal(gate.waitMs('other.test', 10_000), 0, 'a host that did not move starts at once');
    assert.equal(gate.waitMs('moved.test', 10_000 + 16 * 60_000), 0, 'long after, forgotten');
  });

  test('at most `concurrency` in flight: a full host waits for a finish (Infinity), not for time', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 0 });
    gate.start('a.test', 0);
    gate.reportStart('a.test', 0);
    assert.equal(gate.waitMs('a.test', 0), 0);
    gate.start('a.test', 0);
    gate.reportStart('a.test', 0);
    assert.equal(gate.inFlight('a.test'), 2);
    assert.equal(gate.waitMs('a.test', 0), Infinity);
    assert.equal(gate.waitMs('a.test', 1e12), Infinity, 'time alone does not free a slot');
    gate.finish('a.test', 5);
    assert.equal(gate.inFlight('a.test'), 1);
    assert.equal(gate.waitMs('a.test', 5), 0);
  });

  test('a finish keeps the delay running: the next start still waits for it', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 1_000 });
    gate.start('a.test', 0);
    gate.reportStart('a.test', 0);
    gate.finish('a.test', 100);
    assert.equal(gate.inFlight('a.test'), 0);
    assert.equal(gate.waitMs('a.test', 100), gap(1_000) - 100);
    assert.equal(gate.waitMs('a.test', gap(1_000)), 0);
  });

  test('an idle host whose delay has passed is forgotten, and starts afresh', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 100 });
    gate.start('a.test', 0);
    gate.reportStart('a.test', 0);
    gate.finish('a.test', 500);
    assert.equal(gate.inFlight('a.test'), 0);
    assert.equal(gate.waitMs('a.test', 0), 0, 'no state left, even for an earlier now');
  });

  test('hosts are independent: a busy or deferred host never holds back another', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 1_000 });
    gate.start('slow.test', 0);
    gate.reportStart('slow.test', 0);
    gate.defer('slow.test', 60_000);
    assert.equal(gate.waitMs('slow.test', 0), Infinity);
    assert.equal(gate.waitMs('fast.test', 0), 0);
    gate.start('fast.test', 0);
    gate.reportStart('fast.test', 0);
    assert.equal(gate.inFlight('fast.test'), 1);
    assert.equal(gate.inFlight('slow.test'), 1);
  });

  test('defer pushes the next start back and never brings it forward', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 500 });
    gate.defer('a.test', 30_000, 'robots.txt unreachable');
    assert.equal(gate.waitMs('a.test', 0), 30_000);
    assert.equal(gate.explain('a.test', 0).pauseReason, 'robots.txt unreachable');
    gate.defer('a.test', 10_000);
    assert.equal(gate.waitMs('a.test', 0), 30_000, 'an earlier defer does not shorten the wait');
    gate.start('a.test', 30_000);
    gate.reportStart('a.test', 30_000);
    gate.defer('a.test', 100);
    assert.equal(gate.waitMs('a.test', 30_000), gap(500));
  });

  test('a finish for an unknown host is a no-op', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 0 });
    gate.finish('never.test', 0);
    assert.equal(gate.inFlight('never.test'), 0);
    assert.equal(gate.waitMs('never.test', 0), 0);
  });

  describe('host rules', () => {
    const rules = parseHostRules(
      'slow.test concurrency=1 delay=2000; slow.test:8080 delay=5000; *.cdn.test concurrency=8 delay=0',
    );

    test('override concurrency and delay for matching hosts only, most specific first', () => {
      const gate = gateWith({ concurrency: 2, delayMs: 500, hostRules: rules });
      gate.start('slow.test:81', 0);
      gate.reportStart('slow.test:81', 0);
      assert.equal(gate.waitMs('slow.test:81', 0), Infinity, 'concurrency 1 from the rule');
      gate.finish('slow.test:81', 10);
      assert.equal(gate.waitMs('slow.test:81', 10), gap(2_000) - 10);
      gate.start('slow.test:8080', 0);
      gate.reportStart('slow.test:8080', 0);
      gate.finish('slow.test:8080', 0);
      assert.equal(gate.waitMs('slow.test:8080', 0), gap(5_000), 'host:port beats host');
      for (let i = 0; i < 8; i++) gate.start('img.cdn.test', 0);
      gate.reportStart('img.cdn.test', 0);
      assert.equal(gate.waitMs('img.cdn.test', 0), Infinity);
      gate.finish('img.cdn.test', 0);
      assert.equal(gate.waitMs('img.cdn.test', 0), 0, 'delay 0 from the wildcard rule');
      assert.equal(gate.explain('cdn.test', 0).rule, null, '*.cdn.test does not cover cdn.test itself');
      gate.start('other.test', 0);
      gate.reportStart('other.test', 0);
      assert.equal(gate.waitMs('other.test', 0), gap(500), 'the job default elsewhere');
    });

    test('the text form rejects unknown options with a clear error', () => {
      assert.throws(() => parseHostRules('a.test speed=9'), { code: 'BAD_HOST_RULE' });
      assert.throws(() => parseHostRules('a.test concurrency=0'), { code: 'BAD_HOST_RULE' });
      assert.throws(() => parseHostRules('a b.test'), { code: 'BAD_HOST_RULE' });
      assert.deepEqual(parseHostRules(' A.Test adaptive ; '), [{ host: 'a.test', adaptive: true }]);
    });
  });

  describe('robots.txt Crawl-delay', () => {
    test('raises the delay, never lowers it, and is capped with a warning', () => {
      const warnings: unknown[] = [];
      const logger = { warn: (o: unknown) => warnings.push(o), info: () => undefined } as never;
      const gate = gateWith({ concurrency: 1, delayMs: 500, maxCrawlDelayMs: 10_000 }, { logger });
      gate.setCrawlDelay('a.test', 3_000);
      gate.setCrawlDelay('b.test', 100);
      gate.setCrawlDelay('c.test', 120_000);
      for (const host of ['a.test', 'b.test', 'c.test']) {
        gate.start(host, 0);
        gate.reportStart(host, 0);
        gate.finish(host, 0);
      }
      assert.equal(gate.waitMs('a.test', 0), gap(3_000));
      assert.equal(gate.waitMs('b.test', 0), gap(500), 'a smaller Crawl-delay keeps the job delay');
      assert.equal(gate.waitMs('c.test', 0), gap(10_000), 'capped');
      assert.equal(warnings.length, 1);
      assert.equal(gate.explain('c.test', 0).crawlDelayMs, 10_000);
      gate.setCrawlDelay('a.test', null);
      assert.equal(gate.waitMs('a.test', 0), gap(500));
    });
  });

  describe('429 and 503 cool-down', () => {
    test('Retry-After pauses the host for that long, capped by maxCooldownMs', () => {
      const gate = gateWith({ concurrency: 4, delayMs: 0, maxCooldownMs: 60_000 });
      gate.start('a.test', 1_000);
      gate.reportStart('a.test', 1_000);
      gate.finish('a.test', 1_000, { status: 429, responseMs: 5, retryAfterMs: 20_000 });
      assert.equal(gate.waitMs('a.test', 1_000), 20_000);
      assert.match(gate.explain('a.test', 1_000).pauseReason ?? '', /HTTP 429/);
      assert.equal(gate.waitMs('b.test', 1_000), 0, 'other hosts are not paused');
      gate.start('z.test', 0);
      gate.reportStart('z.test', 0);
      gate.finish('z.test', 0, { status: 503, responseMs: 5, retryAfterMs: 3_600_000 });
      assert.equal(gate.waitMs('z.test', 0), 60_000, 'a huge Retry-After is cut to the cap');
    });

    test('without Retry-After: exponential backoff with jitter, reset by a success', () => {
      let r = 0;
      const gate = gateWith(
        { concurrency: 4, delayMs: 0, cooldownBaseMs: 1_000, maxCooldownMs: 5_000 },
        { random: () => r },
      );
      const slowDown = (now: number): number => {
        gate.start('a.test', now);
        gate.reportStart('a.test', now);
        gate.finish('a.test', now, { status: 503, responseMs: 1, retryAfterMs: null });
        return gate.waitMs('a.test', now);
      };
      r = 0;
      assert.equal(slowDown(0), 500, 'first: base/2 + jitter(0)');
      r = 1;
      assert.equal(slowDown(10_000), 2_000, 'second: doubled, full jitter');
      r = 0.5;
      assert.equal(slowDown(20_000), 3_000, 'third: 4 s, half jitter');
      r = 1;
      assert.equal(slowDown(30_000), 5_000, 'capped');
      gate.start('a.test', 40_000);
      gate.reportStart('a.test', 40_000);
      gate.finish('a.test', 40_000, { status: 200, responseMs: 1, retryAfterMs: null });
      r = 1;
      assert.equal(slowDown(50_000), 1_000, 'a success resets the streak');
    });
  });

  describe('adaptive delay', () => {
    test("follows the host's response time between the job delay and the cap; errors never lower it", () => {
      const gate = gateWith({ concurrency: 1, delayMs: 100, adaptiveDelay: true, maxAdaptiveDelayMs: 3_000 });
      const fetch = (now: number, responseMs: number, status = 200): number => {
        gate.start('a.test', now);
        gate.reportStart('a.test', now);
        gate.finish('a.test', now, { status, responseMs, retryAfterMs: null });
        return gate.explain('a.test', now).delayMs;
      };
      assert.equal(fetch(0, 900), 500, 'halfway from 100 toward 900');
      assert.equal(fetch(10_000, 900), 700);
      assert.equal(fetch(20_000, 20_000), 3_000, 'capped');
      assert.equal(fetch(30_000, 10, 500), 3_000, 'a fast error does not speed the host up');
      assert.equal(fetch(40_000, 10), 1_505);
      assert.equal(fetch(50_000, 0), 753);
      for (let i = 0; i < 20; i++) fetch(60_000 + i * 10_000, 0);
      assert.equal(gate.explain('a.test', 0).delayMs, 100, 'never below the job delay');
    });

    test('a host rule turns it on for some hosts only', () => {
      const gate = gateWith({ concurrency: 1, delayMs: 0, hostRules: parseHostRules('slow.test adaptive') });
      for (const host of ['slow.test', 'fast.test']) {
        gate.start(host, 0);
        gate.reportStart(host, 0);
        gate.finish(host, 0, { status: 200, responseMs: 1_000, retryAfterMs: null });
      }
      assert.equal(gate.explain('slow.test', 0).delayMs, 500);
      assert.equal(gate.explain('fast.test', 0).delayMs, 0);
    });
  });

  test('learned state is bounded: the least recently used host is forgotten first', () => {
    const gate = gateWith({ concurrency: 1, delayMs: 0 }, { learnedCapacity: 3 });
    for (const host of ['a', 'b', 'c', 'd']) gate.setCrawlDelay(host, 1_000);
    assert.equal(gate.explain('a', 0).crawlDelayMs, null);
    assert.equal(gate.explain('d', 0).crawlDelayMs, 1_000);
  });

  test('estimateWaitMs grows with the tasks queued, the delay and the pause', () => {
    const gate = gateWith({ concurrency: 2, delayMs: 1_000 });
    assert.equal(gate.estimateWaitMs('a.test', 0, 0), 0);
    assert.equal(gate.estimateWaitMs('a.test', 0, 10), 10 * (gap(1_000) / 2));
    gate.defer('a.test', 60_000);
    assert.equal(gate.estimateWaitMs('a.test', 0, 10), 60_000 + 10 * (gap(1_000) / 2));
  });
});

describe('HostGate: delays run from when the request really went out', () => {
  test('a host with a delay waits for the crawler to report the start, and counts from the report', () => {
    const gate = gateWith({ concurrency: 4, delayMs: 1_000 });
    assert.equal(gate.start('a.test', 0), true, 'the crawler is asked to report the start');
    assert.equal(gate.waitMs('a.test', 5_000), Infinity, 'not before the report, however long');
    gate.reportStart('a.test', 400);
    assert.equal(gate.waitMs('a.test', 400), gap(1_000), 'the delay runs from the report');
    assert.equal(gate.waitMs('a.test', 400 + gap(1_000)), 0);
  });

  test('a request whose start was never reported counts as started when it ends', () => {
    const gate = gateWith({ concurrency: 4, delayMs: 1_000 });
    gate.start('a.test', 0);
    gate.finish('a.test', 300, undefined, true);
    assert.equal(gate.waitMs('a.test', 300), gap(1_000));
  });

  test('a host without a delay needs no report', () => {
    const gate = gateWith({ concurrency: 4, delayMs: 0 });
    assert.equal(gate.start('a.test', 0), false);
    assert.equal(gate.waitMs('a.test', 0), 0);
  });
});
