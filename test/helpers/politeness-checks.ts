import assert from 'node:assert/strict';
import {
  closestStarts,
  peakConcurrency,
  smallestStartGap,
  stallNote,
  type HostSpec,
  type PolitenessSite,
} from '../fixtures/politeness-site.js';

/**
 * The fleet-politeness scenario: a default host, a slow host (rule: 1 at a time, 1 s apart), a
 * fast host (rule: 8 at a time, no delay) and a host that answers one 429 with Retry-After.
 */
export const POLITENESS_HOSTS: readonly HostSpec[] = [
  { name: 'default', pages: 24, responseMs: 40 },
  { name: 'slow', pages: 10, responseMs: 20 },
  { name: 'fast', pages: 300, responseMs: 5 },
  { name: 'throttle', pages: 8, responseMs: 10, throttleOnce: { path: '/p/3', retryAfterS: 2 } },
];

export const DEFAULT_LIMITS = { concurrency: 2, delayMs: 300 };

export function politenessArgs(site: PolitenessSite): string[] {
  const host = (name: string): string => site.hosts.get(name)?.host ?? '';
  return [
    ...[...site.hosts.values()].map((h) => h.url),
    '--allow-private',
    '--host-concurrency',
    String(DEFAULT_LIMITS.concurrency),
    '--host-delay',
    String(DEFAULT_LIMITS.delayMs),
    '--host-rule',
    `${host('slow')} concurrency=1 delay=1000`,
    '--host-rule',
    `${host('fast')} concurrency=8 delay=0`,
    '--retry-delay',
    '0',
    '--json',
  ];
}

/** Asserts, from the servers' own logs, that no host's limits were ever broken. */
export async function checkPoliteness(site: PolitenessSite): Promise<void> {
  await site.settle();
  const limits: Record<string, { concurrency: number; delayMs: number }> = {
    default: DEFAULT_LIMITS,
    slow: { concurrency: 1, delayMs: 1_000 },
    fast: { concurrency: 8, delayMs: 0 },
    throttle: DEFAULT_LIMITS,
  };
  for (const [name, h] of site.hosts) {
    const limit = limits[name] as { concurrency: number; delayMs: number };
    const ok = h.spans.filter((s) => s.status === 200).length;
    assert.equal(ok, h.spec.pages + 1, `${name}: every page served once`);
    const peak = peakConcurrency(h.spans);
    const gap = smallestStartGap(h.spans);
    const stall = stallNote(closestStarts(h.spans));
    console.log(
      `# ${name}: ${h.spans.length} requests, peak ${peak} in flight (limit ${limit.concurrency}), smallest start gap ${gap} ms (limit ${limit.delayMs}${stall})`,
    );
    assert.ok(peak <= limit.concurrency, `${name}: ${peak} requests in flight, limit ${limit.concurrency}`);
    // The scheduler spaces starts by the delay plus a 10% margin, counted from the crawler's report
    // that the request went out. The server's own timestamps can lag by the time it waits for a
    // CPU on a loaded machine (its thread runs at nice -20 when allowed); 20 ms of that is allowed.
    // A longer stall of the site's thread is measured, and the gap counted from before it.
    assert.ok(
      gap >= limit.delayMs - 20,
      `${name}: two starts ${gap} ms apart, limit ${limit.delayMs} (site thread at nice ${site.stampPriority ?? '0: not raised'}${stall})`,
    );
  }
  const throttle = site.hosts.get('throttle');
  const refused = throttle?.spans.find((s) => s.status === 429);
  assert.ok(throttle && refused, 'the throttling host answered 429 once');
  const next = throttle.spans.filter((s) => s.start > refused.start).sort((a, b) => a.start - b.start)[0];
  assert.ok(next, 'the throttled host was crawled again after its cool-down');
  assert.ok(
    next.start - refused.end >= 2_000,
    `Retry-After: 2 honoured: next request ${next.start - refused.end} ms after the 429`,
  );
  // No head-of-line blocking: the fast host is done long before the slow one, whose 11 requests
  // need at least 10 s.
  const slow = site.hosts.get('slow')?.spans ?? [];
  const fast = site.hosts.get('fast')?.spans ?? [];
  const fastDone = Math.max(...fast.map((s) => s.end));
  const slowLastStart = Math.max(...slow.map((s) => s.start));
  const fastSpan = fastDone - Math.min(...fast.map((s) => s.start));
  console.log(
    `# fast host: ${fast.length} requests in ${fastSpan} ms; slow host's last start ${slowLastStart - fastDone} ms later`,
  );
  assert.ok(fastDone < slowLastStart, 'the fast host finished while the slow host was still being crawled');
}
