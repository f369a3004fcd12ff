import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import {
  RedirectSpacing,
  type HopAnswer,
  type StoppedRedirect,
} from '../../client/crawler/fetch/redirect-spacing.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { closeServer, startRedirectSite, type Arrival } from '../helpers/redirect-site.js';

const SETTINGS: FetchSettings = {
  userAgent: 'ackcrawl-test',
  connectTimeoutMs: 1_000,
  responseTimeoutMs: 1_000,
  totalTimeoutMs: 2_000,
  maxRedirects: 5,
  maxBodyBytes: 1024,
  allowPrivate: true,
};

/** A site that answers each path with a redirect (its Location) or a page (null). */
const site = (routes: () => Record<string, string | null>) => startRedirectSite(routes);

const close = closeServer;

const gapsOf = (arrivals: Arrival[]): number[] =>
  arrivals.slice(1).map((a, i) => a.at - (arrivals[i] as Arrival).at);

/**
 * A scheduler's answers, as the crawler sees them: each `hop` is answered `afterMs` later (never,
 * when null), granted unless `deny` says its URL may not go.
 */
function grants(
  afterMs: number | null,
  deny: (url: string) => boolean = () => false,
): { awaitHop: (url: string) => Promise<HopAnswer>; asked: () => number; urls: string[] } {
  const urls: string[] = [];
  return {
    asked: () => urls.length,
    urls,
    awaitHop: (url) => {
      urls.push(url);
      return new Promise<HopAnswer>((resolve) => {
        if (afterMs !== null) setTimeout(() => resolve(deny(url) ? 'denied' : 'granted'), afterMs);
      });
    },
  };
}

/** The redirect a hop comes from, as the fetcher hands it to beforeHop. */
const FROM: StoppedRedirect = { status: 302, url: 'http://example.test/a', headers: {}, redirects: [] };

test('each redirect back to the task’s host waits for the scheduler’s grant, and its write is reported', async () => {
  const { server, port, arrivals } = await site(() => ({ '/a': '/b', '/b': '/c', '/c': null }));
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  try {
    let reported = 0;
    const scheduler = grants(250);
    const page = await fetcher.fetch(`http://127.0.0.1:${port}/a`, {
      awaitHop: scheduler.awaitHop,
      onRequestSent: () => void (reported += 1),
    });
    assert.equal(page.status, 200);
    assert.deepEqual(
      arrivals.map((a) => a.path),
      ['/a', '/b', '/c'],
    );
    assert.equal(scheduler.asked(), 2, 'one grant per hop');
    for (const gap of gapsOf(arrivals)) assert.ok(gap >= 240, `hops ${gapsOf(arrivals).join(', ')} ms apart`);
    assert.equal(reported, 3, 'every write to the host is reported');
    // Without grants (no delay at the host) the chain goes at once; the hops are still reported.
    arrivals.length = 0;
    reported = 0;
    await fetcher.fetch(`http://127.0.0.1:${port}/a`, { onRequestSent: () => void (reported += 1) });
    assert.ok(
      gapsOf(arrivals).every((gap) => gap < 200),
      `no wait without grants: ${gapsOf(arrivals).join(', ')} ms`,
    );
    assert.equal(reported, 3);
  } finally {
    await close(server);
  }
});

test('a hop to another host goes at once and is not reported; the hop back home waits for its grant', async () => {
  // Home sends the chain to the other host (another port), which sends it back home.
  const ports = { home: 0, other: 0 };
  const home = await site(() => ({ '/x': `http://127.0.0.1:${ports.other}/to-home`, '/z': null }));
  const other = await site(() => ({ '/to-home': `http://127.0.0.1:${ports.home}/z` }));
  ports.home = home.port;
  ports.other = other.port;
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  try {
    let reported = 0;
    const scheduler = grants(300);
    const page = await fetcher.fetch(`http://127.0.0.1:${home.port}/x`, {
      awaitHop: scheduler.awaitHop,
      onRequestSent: () => void (reported += 1),
    });
    assert.equal(page.status, 200);
    const [x, z] = home.arrivals;
    const [toHome] = other.arrivals;
    assert.ok(x && z && toHome, 'each host saw its requests');
    assert.ok(toHome.at - x.at < 250, `the other host's hop went at once (${toHome.at - x.at} ms)`);
    assert.ok(z.at - toHome.at >= 290, `back home after the grant (${z.at - toHome.at} ms)`);
    assert.equal(scheduler.asked(), 1, 'a grant for the hop home only');
    assert.equal(reported, 2, 'the home host’s two writes, not the other host’s');
  } finally {
    await close(home.server);
    await close(other.server);
  }
});

test('a redirect with no grant by the total time limit fails, typed, without the hop', async () => {
  const { server, port, arrivals } = await site(() => ({ '/a': '/b', '/b': null }));
  const fetcher = new Fetcher({ ...SETTINGS, totalTimeoutMs: 800 }, createAgents({ allowPrivate: true }));
  try {
    const failure = await fetcher
      .fetch(`http://127.0.0.1:${port}/a`, {
        awaitHop: grants(null).awaitHop,
        onRequestSent: () => undefined,
      })
      .then(
        () => assert.fail('fetched'),
        (err: unknown) => err,
      );
    assert.ok(failure instanceof FetchError, String(failure));
    assert.equal(failure.code, 'REDIRECT_WAIT_OVER_TIMEOUT');
    assert.equal(failure.retriable, false);
    assert.deepEqual(
      arrivals.map((a) => a.path),
      ['/a'],
    );
  } finally {
    await close(server);
  }
});

test('a task withdrawn while its redirect waits ends at once, without the hop', async () => {
  const { server, port, arrivals } = await site(() => ({ '/a': '/b', '/b': null }));
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  try {
    const withdraw = new AbortController();
    const startedAt = Date.now();
    const failure = await fetcher
      .fetch(`http://127.0.0.1:${port}/a`, {
        awaitHop: grants(1_500).awaitHop,
        onRequestSent: () => setTimeout(() => withdraw.abort(), 100),
        signal: withdraw.signal,
      })
      .then(
        () => assert.fail('fetched'),
        (err: unknown) => err,
      );
    assert.ok(failure instanceof FetchError, String(failure));
    assert.equal(failure.code, 'CONNECTION_ABORTED');
    assert.ok(Date.now() - startedAt < 1_000, 'it did not wait for the grant');
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    assert.deepEqual(
      arrivals.map((a) => a.path),
      ['/a'],
      'the hop never went, even once the grant came',
    );
  } finally {
    await close(server);
  }
});

test('RedirectSpacing: which hops ask for a grant', async () => {
  const scheduler = grants(0);
  const spacing = new RedirectSpacing({
    url: 'http://example.test/a',
    awaitGrant: scheduler.awaitHop,
    deadline: Date.now() + 1_000,
  });
  assert.ok(spacing.isOwnHost('http://example.test:80/b'), 'the default port is the same host');
  assert.ok(spacing.isOwnHost('https://example.test/b'), 'the host key has no scheme (normalize.ts)');
  assert.ok(!spacing.isOwnHost('http://example.test:8080/b'), 'another port is another host');
  await spacing.beforeHop(new URL('http://other.test/b'), FROM);
  assert.equal(scheduler.asked(), 0, 'another host: at once');
  await spacing.beforeHop(new URL('http://example.test/b'), FROM);
  assert.equal(scheduler.asked(), 1);
  assert.deepEqual(scheduler.urls, ['http://example.test/b'], 'the scheduler is told where the hop goes');
  const ungranted = new RedirectSpacing({ url: 'http://example.test/a', deadline: Date.now() + 1_000 });
  await ungranted.beforeHop(new URL('http://example.test/b'), FROM); // no grants: at once
  const late = new RedirectSpacing({
    url: 'http://example.test/a',
    awaitGrant: scheduler.awaitHop,
    deadline: Date.now() - 1,
  });
  await assert.rejects(late.beforeHop(new URL('http://example.test/b'), FROM), (err: unknown) => {
    assert.ok(err instanceof FetchError);
    assert.equal(err.code, 'REDIRECT_WAIT_OVER_TIMEOUT');
    return true;
  });
});

test('a hop the scheduler denies (robots.txt) ends the fetch with the redirect, and never goes', async () => {
  const { server, port, arrivals } = await site(() => ({
    '/a': '/b',
    '/b': '/private/c',
    '/private/c': null,
  }));
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  const origin = `http://127.0.0.1:${port}`;
  try {
    const scheduler = grants(0, (url) => new URL(url).pathname.startsWith('/private/'));
    const page = await fetcher.fetch(`${origin}/a`, { awaitHop: scheduler.awaitHop });
    assert.deepEqual(
      scheduler.urls,
      [`${origin}/b`, `${origin}/private/c`],
      'each hop asked with its target',
    );
    assert.equal(page.status, 302, 'the fetch ends with the redirect it stopped at');
    assert.equal(page.finalUrl, `${origin}/b`);
    assert.deepEqual(page.redirects, [`${origin}/b`], 'the granted hop only');
    assert.equal(page.headers['location'], '/private/c');
    assert.equal(page.body.length, 0);
    assert.deepEqual(
      arrivals.map((a) => a.path),
      ['/a', '/b'],
      'the denied hop never reached the host',
    );
  } finally {
    await close(server);
  }
});

test('a redirect on the host to a URL too long to crawl fails, typed, without asking the scheduler', async () => {
  const long = `/${'x'.repeat(9_000)}`;
  const { server, port, arrivals } = await site(() => ({ '/a': long, [long]: null }));
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  try {
    const scheduler = grants(0);
    const failure = await fetcher.fetch(`http://127.0.0.1:${port}/a`, { awaitHop: scheduler.awaitHop }).then(
      () => assert.fail('fetched'),
      (err: unknown) => err,
    );
    assert.ok(failure instanceof FetchError, String(failure));
    assert.equal(failure.code, 'BAD_REDIRECT');
    assert.equal(scheduler.asked(), 0, 'a hop naming it would be refused as a bad frame');
    assert.deepEqual(
      arrivals.map((a) => a.path),
      ['/a'],
    );
  } finally {
    await close(server);
  }
});
