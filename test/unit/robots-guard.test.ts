import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostGate } from '../../scheduler/politeness/host-gate.js';
import { DEFAULT_POLITENESS } from '../../scheduler/politeness/politeness-settings.js';
import { RobotsCache } from '../../scheduler/robots/robots-cache.js';
import { RobotsGuard, type RobotsPolicy } from '../../scheduler/robots/robots-guard.js';
import { RobotsRules } from '../../scheduler/robots/robots-rules.js';
import { silentLogger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { RobotsAnswer } from '../../shared/protocol/messages.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import type { Lease } from '../../shared/protocol/task.js';
import { FakeClock } from '../helpers/fake-clock.js';

const HOST = 'a.test:8080';
const ORIGIN = `http://${HOST}`;
const lease = (path: string, attempt = 1): Lease => ({
  runId: 'default',
  taskId: `t${path}`,
  leaseId: `l${path}${attempt}`,
  url: `${ORIGIN}${path}`,
  host: HOST,
  depth: 1,
  priority: 0,
  parentUrl: `${ORIGIN}/`,
  attempt,
  lastError: null,
});

function setup(
  policy: Partial<RobotsPolicy> = {},
  cache: Partial<ConstructorParameters<typeof RobotsCache>[0]> = {},
  paces?: (host: string) => boolean,
) {
  const clock = new FakeClock();
  const warnings: unknown[] = [];
  const logger = silentLogger();
  logger.warn = ((obj: unknown) => warnings.push(obj)) as typeof logger.warn;
  const gate = new HostGate(
    { ...DEFAULT_POLITENESS, concurrency: 2, delayMs: 100, maxCrawlDelayMs: 5_000 },
    { logger },
  );
  const failed: { lease: Lease; record: PageRecord; error: string }[] = [];
  const retried: { lease: Lease; delayMs: number; error: string }[] = [];
  const known: string[] = [];
  const woken: (readonly string[])[] = [];
  const evict = { to: (host: string): void => void host };
  const robotsCache = new RobotsCache({
    ttlMs: 60_000,
    retryMs: 1_000,
    retryMaxMs: 8_000,
    maxHosts: 100,
    maxBytes: 1 << 20,
    onEvict: (host) => evict.to(host),
    ...cache,
  });
  const guard = new RobotsGuard({
    cache: robotsCache,
    gate,
    clock: clock.fn,
    logger,
    policy: () => ({
      respectRobots: true,
      sitemaps: false,
      userAgent: 'ackcrawl/0.1 (+https://example.test/bot)',
      maxAttempts: 3,
      retryDelayMs: 60_000,
      ...policy,
    }),
    settle: {
      fail: (l: Lease, r: SinkRecord, e: string) =>
        failed.push({ lease: l, record: JSON.parse(r.value.toString()) as PageRecord, error: e }),
      retry: (l, delayMs, error) => retried.push({ lease: l, delayMs, error }),
    },
    wake: (hosts) => woken.push(hosts),
    onKnown: (host) => known.push(host),
    ...(paces ? { paces } : {}),
  });
  evict.to = (host) => guard.evicted(host);
  /** Sends the robots fetch now due and answers it. */
  const fetchRobots = (answer: Omit<RobotsAnswer, 'type' | 'taskId'>) => {
    const task = guard.nextTask('s1', clock.now());
    assert.ok(task, 'a robots task is due');
    assert.equal(task.kind, 'robots');
    assert.equal(task.url, `${ORIGIN}/robots.txt`);
    assert.equal(guard.answer('s1', { type: 'robots', taskId: task.taskId, ...answer }), true);
    return task;
  };
  return { clock, gate, guard, failed, retried, known, warnings, woken, fetchRobots, cache: robotsCache };
}

const ok = (body: string) => ({ status: 200, body, failure: null });

describe('RobotsGuard', () => {
  test('the dispatcher is woken with the hosts whose robots.txt fetch ended, once per turn', async () => {
    const { clock, guard, woken, fetchRobots } = setup();
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity); // wanted: a wake to send the fetch
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(woken, [[]], 'nothing changed for a host yet');
    fetchRobots(ok(''));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(woken.at(-1), [HOST], 'its slot is free and its rules known: look at it again');
  });

  test('a host waits until its robots.txt is known; the fetch goes out once, counted by the gate', () => {
    const { clock, gate, guard, fetchRobots } = setup();
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity);
    assert.equal(guard.waitMs(lease('/b'), clock.now()), Infinity);
    assert.deepEqual(guard.explain(`${ORIGIN}/a`), { state: 'unknown', failures: 0 });
    const task = guard.nextTask('s1', clock.now());
    assert.ok(task);
    assert.equal(task.attempt, 1);
    assert.equal(gate.inFlight(HOST), 1, 'the robots fetch holds a host slot');
    assert.equal(guard.nextTask('s2', clock.now()), null, 'one fetch per host, whatever the sessions');
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity, 'still waiting while fetching');
    assert.equal(guard.explain(`${ORIGIN}/a`).state, 'fetching');
    assert.equal(guard.answer('s2', { type: 'robots', taskId: task.taskId, ...ok('') }), false, 'not s2’s');
    assert.equal(guard.answer('s1', { type: 'robots', taskId: task.taskId, ...ok('') }), true);
    assert.equal(gate.inFlight(HOST), 0);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 0);
    assert.equal(guard.nextTask('s1', clock.now()), null, 'not fetched again');
    void fetchRobots;
  });

  test('a page’s redirects on its host are checked against its rules; a sitemap’s are not', () => {
    const { clock, guard, fetchRobots } = setup();
    guard.waitMs(lease('/'), clock.now());
    assert.equal(
      guard.allowsHop(lease('/a'), `${ORIGIN}/private/x`),
      true,
      'rules unknown: as the task went',
    );
    fetchRobots(ok('User-agent: *\nDisallow: /private\nAllow: /private/open\n'));
    assert.equal(guard.checksHops(lease('/a')), true);
    assert.equal(guard.allowsHop(lease('/a'), `${ORIGIN}/private/x`), false);
    assert.equal(guard.allowsHop(lease('/a'), `${ORIGIN}/private/open/x`), true);
    assert.equal(guard.allowsHop(lease('/a'), `${ORIGIN}/public`), true);
    const sitemap = { ...lease('/sitemap.xml'), kind: 'sitemap' as const };
    assert.equal(guard.checksHops(sitemap), false);
    assert.equal(guard.allowsHop(sitemap, `${ORIGIN}/private/sitemap.xml`), true);
    const ignoring = setup({ respectRobots: false });
    assert.equal(ignoring.guard.checksHops(lease('/a')), false, 'robots.txt not obeyed: nothing to check');
    assert.equal(ignoring.guard.allowsHop(lease('/a'), `${ORIGIN}/private/x`), true);
  });

  test('a host whose rules disallow nothing has no hops to check', () => {
    for (const [text, checks] of [
      ['', false],
      ['User-agent: *\nDisallow:\n', false],
      ['User-agent: *\nAllow: /\nCrawl-delay: 1\n', false],
      ['User-agent: other\nDisallow: /x\n', true],
      ['User-agent: *\nDisallow: /private\n', true],
    ] as const) {
      const { clock, guard, fetchRobots } = setup();
      guard.waitMs(lease('/'), clock.now());
      assert.equal(guard.checksHops(lease('/a')), true, 'rules not known yet: checked');
      fetchRobots(ok(text));
      assert.equal(guard.checksHops(lease('/a')), checks, JSON.stringify(text));
    }
    const { clock, guard, fetchRobots } = setup();
    guard.waitMs(lease('/'), clock.now());
    fetchRobots({ ...ok(''), status: 404 });
    assert.equal(guard.checksHops(lease('/a')), false, 'no robots.txt: nothing disallowed');
  });

  test('a disallowed URL is settled as a final ROBOTS_DENIED record naming the line; others pass', () => {
    const { clock, guard, failed, fetchRobots } = setup();
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(ok('# rules\nUser-agent: *\nDisallow: /private\nAllow: /private/open\n'));
    assert.equal(guard.intercept(lease('/public')), false);
    assert.equal(guard.intercept(lease('/private/open/x')), false);
    assert.equal(guard.intercept(lease('/private/x', 1)), true);
    assert.equal(failed.length, 1);
    const { record, error } = failed[0] as (typeof failed)[number];
    assert.equal(record.outcome, 'failed');
    assert.deepEqual(record.error, {
      code: 'ROBOTS_DENIED',
      message: 'Disallow: /private (robots.txt line 3)',
    });
    assert.equal(record.url, `${ORIGIN}/private/x`);
    assert.equal(record.depth, 1);
    assert.equal(record.crawlerId, 'scheduler');
    assert.match(error, /^ROBOTS_DENIED: /);
    assert.deepEqual(guard.explain(`${ORIGIN}/private/x`), {
      state: 'disallowed',
      line: 3,
      rule: 'Disallow: /private',
    });
    assert.deepEqual(guard.explain(`${ORIGIN}/private/open/1`), {
      state: 'allowed',
      line: 4,
      rule: 'Allow: /private/open',
    });
  });

  test('the group naming our product token beats `*`', () => {
    const { clock, guard, fetchRobots } = setup();
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(ok('User-agent: *\nDisallow: /\n\nUser-agent: AckCrawl\nDisallow: /only-this\n'));
    assert.equal(guard.intercept(lease('/anything')), false);
    assert.equal(guard.intercept(lease('/only-this')), true);
  });

  test('4xx means allow all; a failure that will not heal too', () => {
    for (const answer of [
      { status: 404, body: '', failure: null },
      { status: 403, body: '', failure: null },
      {
        status: null,
        body: '',
        failure: {
          code: 'TOO_MANY_REDIRECTS',
          message: 'x',
          retriable: false,
          status: null,
          retryAfterMs: null,
        },
      },
    ]) {
      const { clock, guard, fetchRobots } = setup();
      guard.waitMs(lease('/'), clock.now());
      fetchRobots(answer);
      assert.equal(guard.waitMs(lease('/x'), clock.now()), 0, JSON.stringify(answer));
      assert.equal(guard.intercept(lease('/x')), false);
    }
  });

  test('5xx and network failures defer the host with a doubling backoff; pages wait meanwhile', () => {
    const { clock, guard, fetchRobots, retried, failed } = setup({ maxAttempts: 5 });
    guard.waitMs(lease('/'), clock.now());
    fetchRobots({ status: 503, body: '', failure: null });
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 1_000);
    assert.equal(guard.nextTask('s1', clock.now()), null, 'no fetch before the backoff is over');
    assert.deepEqual(guard.explain(`${ORIGIN}/a`), {
      state: 'deferred',
      until: clock.now() + 1_000,
      failures: 1,
      lastError: 'HTTP_503',
    });
    clock.advance(1_000);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity, 'due again: fetch queued');
    const second = fetchRobots({
      status: null,
      body: '',
      failure: {
        code: 'CONNECTION_REFUSED',
        message: 'no',
        retriable: true,
        status: null,
        retryAfterMs: null,
      },
    });
    assert.equal(second.attempt, 2);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 2_000, 'backoff doubled');
    clock.advance(2_000);
    guard.waitMs(lease('/a'), clock.now());
    fetchRobots({ status: 429, body: '', failure: null });
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 4_000);
    clock.advance(4_000);
    guard.waitMs(lease('/a'), clock.now());
    fetchRobots(ok('User-agent: *\nDisallow:\n'));
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 0, 'crawled once robots.txt is had');
    assert.equal(guard.intercept(lease('/a')), false);
    assert.equal(retried.length + failed.length, 0, 'no page was charged while waiting');
  });

  test('after maxAttempts failed fetches, pages go through the retry tiers as ROBOTS_UNAVAILABLE', () => {
    const { clock, guard, fetchRobots, retried, failed } = setup({ maxAttempts: 2, retryDelayMs: 7_000 });
    const refused = {
      status: null,
      body: '',
      failure: {
        code: 'CONNECTION_REFUSED',
        message: 'no',
        retriable: true,
        status: null,
        retryAfterMs: null,
      },
    };
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(refused);
    clock.advance(1_000);
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(refused);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 0, 'no more waiting: the pages are charged');
    assert.equal(guard.intercept(lease('/a', 1)), true);
    assert.deepEqual(
      retried.map((r) => r.delayMs),
      [0],
    );
    assert.match(retried[0]?.error ?? '', /^ROBOTS_UNAVAILABLE: .*CONNECTION_REFUSED/);
    assert.equal(guard.intercept(lease('/a', 2)), true);
    assert.equal(failed.length, 1, 'the last attempt is final');
    assert.equal(failed[0]?.record.error?.code, 'ROBOTS_UNAVAILABLE');
    assert.equal(failed[0]?.record.attempt, 2);
  });

  test('rules expire after the TTL and are fetched again', () => {
    const { clock, guard, fetchRobots } = setup();
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(ok('User-agent: *\nDisallow: /old\n'));
    clock.advance(59_999);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), 0);
    assert.equal(guard.nextTask('s1', clock.now()), null);
    clock.advance(1);
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity, 'expired: wait for the new rules');
    fetchRobots(ok('User-agent: *\nDisallow: /new\n'));
    assert.equal(guard.intercept(lease('/old')), false);
    assert.equal(guard.intercept(lease('/new')), true);
  });

  test('a robots fetch lost with its crawler (or hung) is sent again, and its host slot freed', () => {
    const { clock, gate, guard } = setup();
    guard.waitMs(lease('/'), clock.now());
    const first = guard.nextTask('s1', clock.now());
    assert.ok(first);
    guard.sessionGone('s1');
    assert.equal(gate.inFlight(HOST), 0);
    assert.equal(guard.answer('s1', { type: 'robots', taskId: first.taskId, ...ok('') }), false, 'stale');
    clock.advance(110); // the host delay (100 ms + margin) runs from the lost fetch's end
    const second = guard.nextTask('s2', clock.now());
    assert.ok(second, 'sent again');
    assert.equal(second.attempt, 1, 'a lost fetch is no failure');
    clock.advance(10_000);
    guard.expire(5_000);
    clock.advance(110);
    assert.ok(guard.nextTask('s3', clock.now()), 'a hung fetch is sent again');
  });

  test('a queued fetch of a host another scheduler paces now is dropped, not sent; wanted again later', () => {
    const paced = new Set([HOST]);
    const { clock, guard, cache } = setup({}, {}, (host) => paced.has(host));
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity);
    paced.delete(HOST); // its shard moved to another scheduler before the fetch went out
    assert.equal(guard.nextTask('s1', clock.now()), null, 'not sent');
    assert.equal(cache.peek(HOST), undefined, 'forgotten');
    assert.deepEqual([...cache.queuedHosts()], []);
    paced.add(HOST); // it came back: a task of it asks for the rules again
    assert.equal(guard.waitMs(lease('/a'), clock.now()), Infinity);
    assert.equal(guard.nextTask('s1', clock.now())?.kind, 'robots');
  });

  test('robots.txt fetches out are counted per host predicate (a shard given up stays paced meanwhile)', () => {
    const { clock, guard } = setup();
    assert.equal(
      guard.fetchesInFlightTo(() => true),
      0,
    );
    guard.waitMs(lease('/a'), clock.now());
    const task = guard.nextTask('s1', clock.now());
    assert.ok(task);
    assert.equal(
      guard.fetchesInFlightTo((host) => host === HOST),
      1,
    );
    assert.equal(
      guard.fetchesInFlightTo((host) => host !== HOST),
      0,
    );
    guard.answer('s1', { type: 'robots', taskId: task.taskId, ...ok('') });
    assert.equal(
      guard.fetchesInFlightTo((host) => host === HOST),
      0,
    );
  });

  test('a robots fetch waits for the host gate like any request', () => {
    const { clock, gate, guard } = setup();
    gate.start(HOST, clock.now());
    gate.finish(HOST, clock.now(), undefined, true);
    guard.waitMs(lease('/'), clock.now());
    assert.equal(guard.nextTask('s1', clock.now()), null, 'the host delay is still running');
    clock.advance(110);
    assert.ok(guard.nextTask('s1', clock.now()));
  });

  test('Crawl-delay raises the host delay, capped with a warning', () => {
    const { clock, gate, guard, fetchRobots, warnings } = setup();
    guard.waitMs(lease('/'), clock.now());
    fetchRobots(ok('User-agent: *\nCrawl-delay: 2\n'));
    assert.equal(gate.explain(HOST, clock.now()).delayMs, 2_000, 'max(100 ms, 2 s)');
    assert.equal(warnings.length, 0);

    const capped = setup();
    capped.guard.waitMs(lease('/'), capped.clock.now());
    capped.fetchRobots(ok('User-agent: ackcrawl\nCrawl-delay: 60\n'));
    assert.equal(capped.gate.explain(HOST, capped.clock.now()).delayMs, 5_000, 'cut to the 5 s cap');
    assert.equal(capped.warnings.length, 1);
  });

  test('respectRobots off: nothing waits, nothing is fetched or denied', () => {
    const { clock, guard } = setup({ respectRobots: false });
    assert.equal(guard.waitMs(lease('/'), clock.now()), 0);
    assert.equal(guard.nextTask('s1', clock.now()), null);
    assert.equal(guard.intercept(lease('/private')), false);
    assert.deepEqual(guard.explain(`${ORIGIN}/x`), { state: 'allowed' });
  });

  test('the cache keeps at most maxHosts hosts; a forgotten host loses its Crawl-delay and is fetched again', () => {
    const { clock, gate, guard, cache } = setup({}, { maxHosts: 2 });
    const at = (host: string, path = '/'): Lease => ({ ...lease(path), host, url: `http://${host}${path}` });
    for (const host of ['h1.test', 'h2.test', 'h3.test']) {
      guard.waitMs(at(host), clock.now());
      const task = guard.nextTask('s1', clock.now());
      assert.ok(task);
      guard.answer('s1', { type: 'robots', taskId: task.taskId, ...ok('User-agent: *\nCrawl-delay: 1\n') });
    }
    assert.equal(cache.size, 2);
    assert.equal(cache.peek('h1.test'), undefined, 'least recently used forgotten');
    assert.equal(gate.explain('h2.test', clock.now()).crawlDelayMs, 1_000);
    assert.equal(gate.explain('h1.test', clock.now()).crawlDelayMs, null, 'its Crawl-delay went with it');
    assert.equal(guard.waitMs(at('h1.test'), clock.now()), Infinity, 'fetched again when needed');
  });
});

describe('RobotsRules', () => {
  test('matches by path and query whatever the scheme; wildcards and $ as RFC 9309', () => {
    const rules = RobotsRules.parse(
      'http://a.test',
      'User-agent: *\nDisallow: /*.pdf$\nDisallow: /search?q=\n',
      'ackcrawl/1.0',
    );
    assert.equal(rules.check('https://a.test/file.pdf').allowed, false);
    assert.equal(rules.check('http://a.test/file.pdf?x=1').allowed, true);
    assert.equal(rules.check('http://a.test/search?q=x').allowed, false);
    assert.equal(rules.check('http://a.test').allowed, true);
  });

  test('sitemaps and Crawl-delay are read', () => {
    const rules = RobotsRules.parse(
      'http://a.test',
      'Sitemap: http://a.test/s1.xml\nUser-agent: *\nCrawl-delay: 1.5\nSitemap: http://a.test/s2.xml.gz\n',
      'ackcrawl',
    );
    assert.deepEqual(rules.sitemaps(), ['http://a.test/s1.xml', 'http://a.test/s2.xml.gz']);
    assert.equal(rules.crawlDelayMs(), 1_500);
  });
});
