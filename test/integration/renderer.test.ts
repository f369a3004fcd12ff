import assert from 'node:assert/strict';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { resolvePublic } from '../../client/crawler/render/address-guard.js';
import { BrowserHost, chromiumLauncher } from '../../client/crawler/render/browser-host.js';
import { Renderer } from '../../client/crawler/render/renderer.js';
import { chromiumProblem, DEFAULT_CHROMIUM_PATH } from '../../shared/config/chromium.js';
import { silentLogger } from '../../shared/logger.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';
import { JS_LINKS, startDynamicSite, type DynamicSite } from '../fixtures/dynamic-site.js';
import { freePort } from '../helpers/ports.js';
import { closeServer, startRedirectSite } from '../helpers/redirect-site.js';
import { waitFor } from '../helpers/wait-for.js';

const settings = (overrides: Partial<FetchSettings> = {}): FetchSettings => ({
  userAgent: 'ackcrawl-test/render',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 5_000,
  totalTimeoutMs: 10_000,
  maxRedirects: 5,
  maxBodyBytes: 1024 * 1024,
  allowPrivate: true,
  ...overrides,
});

async function rejection(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FetchError, `a FetchError, not ${String(err)}`);
    return err;
  }
  assert.fail('expected the render to fail');
}

describe('the renderer, driving Debian Chromium', () => {
  let site: DynamicSite;
  let launched: Browser[];
  let host: BrowserHost;
  let renderer: Renderer;

  before(async () => {
    // CI installs chromium (scripts/services.sh up): a missing browser is a failure, not a skip.
    assert.equal(chromiumProblem(DEFAULT_CHROMIUM_PATH), null);
    site = await startDynamicSite();
    launched = [];
    const launch = chromiumLauncher(DEFAULT_CHROMIUM_PATH);
    host = new BrowserHost(async () => {
      const browser = await launch();
      launched.push(browser);
      return browser;
    }, silentLogger());
    renderer = new Renderer({
      host,
      logger: silentLogger(),
      concurrency: 2,
      idleTimeoutMs: 3_000,
      // "public.test" stands for a public site (it is the fixture); every other name resolves for
      // real, so loopback stays refused.
      resolve: async (name) =>
        name === 'public.test' ? { address: '127.0.0.1', family: 4 } : resolvePublic(name),
    });
  });
  after(async () => {
    await renderer.close();
    await site.close();
  });

  test('records the DOM after the network settled: links written by a late fetch are in it', async () => {
    const page = await renderer.render(`${site.origin}/`, settings());
    assert.equal(page.rendered, true);
    assert.equal(page.status, 200);
    assert.equal(page.finalUrl, `${site.origin}/`);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    const html = page.body.toString('utf8');
    for (const href of JS_LINKS) assert.match(html, new RegExp(`<a href="${href}">js ${href}</a>`));
    assert.ok(site.paths().includes('/api/links'), 'the script ran in the browser');
  });

  test('a render task becomes a record with the rendered body, its links and rendered: true', async () => {
    const fetcher = new Fetcher(settings(), createAgents({ allowPrivate: true }));
    const frame = await processTask(
      { taskId: 't1', url: `${site.origin}/`, depth: 0, attempt: 1, parentUrl: null, render: true },
      {
        fetcher,
        crawlerId: 'test',
        render: (url, signal, document) => renderer.render(url, settings(), signal, document),
      },
    );
    const { header, record } = decodeOutcomeFrame(frame);
    const parsed = pageRecordSchema.parse(JSON.parse(record.toString('utf8')));
    assert.equal(header.outcome, 'ok');
    assert.equal(parsed.rendered, true);
    assert.match(parsed.body ?? '', /<a href="\/js-a">/);
    const expected = ['/static', ...JS_LINKS].map((p) => `${site.origin}${p}`);
    assert.deepEqual(parsed.links, expected);
    assert.deepEqual(header.links, expected);
    // Without rendering the same page has only its static link.
    const plain = decodeOutcomeFrame(
      await processTask(
        { taskId: 't2', url: `${site.origin}/`, depth: 0, attempt: 1, parentUrl: null },
        { fetcher, crawlerId: 'test' },
      ),
    );
    assert.deepEqual(plain.header.links, [`${site.origin}/static`]);
    assert.equal(JSON.parse(plain.record.toString('utf8')).rendered, undefined);
  });

  /** A render task's outcome through processTask, the crawler's path: fetched, then rendered. */
  const renderTask = async (
    url: string,
    extra: {
      parentUrl?: string;
      awaitHop?: (url: string) => Promise<'granted' | 'denied'>;
      cookies?: WireCookie[];
    } = {},
  ): Promise<{
    header: ReturnType<typeof decodeOutcomeFrame>['header'];
    record: Record<string, unknown>;
  }> => {
    const fetcher = new Fetcher(settings(), createAgents({ allowPrivate: true }));
    const frame = await processTask(
      {
        taskId: 'r',
        url,
        depth: 1,
        attempt: 1,
        parentUrl: extra.parentUrl ?? null,
        render: true,
        ...(extra.cookies ? { cookies: extra.cookies } : {}),
      },
      {
        fetcher,
        crawlerId: 'test',
        render: (u, signal, document) => renderer.render(u, settings(), signal, document),
        ...(extra.awaitHop ? { awaitHop: extra.awaitHop } : {}),
      },
    );
    const { header, record } = decodeOutcomeFrame(frame);
    return { header, record: JSON.parse(record.toString('utf8')) as Record<string, unknown> };
  };

  test('a render task’s document is fetched once, by the fetcher; the browser loads only what the page loads', async () => {
    const count = (path: string): number => site.paths().filter((p) => p === path).length;
    const home = count('/');
    const api = count('/api/links');
    const { header, record } = await renderTask(`${site.origin}/`);
    assert.equal(header.outcome, 'ok');
    assert.equal(record.rendered, true);
    assert.equal(count('/'), home + 1, 'one request for the document, not two');
    assert.equal(count('/api/links'), api + 1, 'the page’s script ran and fetched its links');
    assert.match(String(record.body), /<a href="\/js-a">/);
  });

  test('a found page’s redirect to another host ends a render task at the 3xx; the browser never goes there', async () => {
    const target = await startRedirectSite(() => ({ '/page': null }));
    const origin = await startRedirectSite(() => ({ '/moved': `${target.origin}/page`, '/old': '/private' }));
    try {
      const { header, record } = await renderTask(`${origin.origin}/moved`, {
        parentUrl: `${origin.origin}/`,
      });
      assert.equal(header.outcome, 'ok');
      assert.equal(record.status, 302);
      assert.equal(record.rendered, undefined, 'a redirect is recorded as fetched, not rendered');
      assert.deepEqual(header.links, [`${target.origin}/page`], 'the target is queued as the one link');
      assert.deepEqual(target.arrivals, [], 'nothing reached the other host');

      // A redirect back to the host that robots.txt refuses (the scheduler denies the hop).
      const asked: string[] = [];
      const denied = await renderTask(`${origin.origin}/old`, {
        parentUrl: `${origin.origin}/`,
        awaitHop: async (url) => {
          asked.push(url);
          return 'denied';
        },
      });
      assert.equal(denied.record.status, 302);
      assert.deepEqual(asked, [`${origin.origin}/private`]);
      assert.ok(!origin.arrivals.some((a) => a.path === '/private'), 'the denied hop was never requested');
    } finally {
      await origin.close();
      await target.close();
    }
  });

  test('a rendered document cannot navigate its page away: the DOM read is its own, the target a link', async () => {
    const page =
      '<title>here</title><a href="/linked">linked</a><script>location.href = "/elsewhere#top";</script>';
    const own = await startRedirectSite(() => ({ '/start': null, '/elsewhere': null, '/linked': null }), {
      page,
    });
    try {
      const { header, record } = await renderTask(`${own.origin}/start`);
      assert.equal(header.outcome, 'ok', JSON.stringify(record.error));
      assert.equal(record.rendered, true);
      assert.equal(record.url, `${own.origin}/start`);
      assert.match(String(record.body), /<title>here<\/title>/, 'the DOM is the page’s own');
      // The script's target is queued as a link, after the DOM's, normalised (no fragment).
      assert.deepEqual(
        header.links,
        [`${own.origin}/linked`, `${own.origin}/elsewhere`],
        String(record.body),
      );
      assert.deepEqual(record.links, header.links);
      assert.equal(record.navigationUrl, `${own.origin}/elsewhere`);
      assert.deepEqual(
        own.arrivals.map((a) => a.path),
        ['/start'],
        'the script’s navigation was refused before it reached the server',
      );
    } finally {
      await own.close();
    }
  });

  test('a rendered page that reloads itself or posts a form queues no link; nofollow keeps the target unfollowed', async () => {
    const reload =
      '<title>reload</title><script>if (!sessionStorage.done) { sessionStorage.done = 1; location.reload(); }</script>' +
      '<form method="post" action="/posted"><input name="q" value="1"></form>' +
      '<script>setTimeout(() => document.forms[0].submit(), 10);</script>';
    const own = await startRedirectSite(() => ({ '/start': null, '/posted': null }), { page: reload });
    try {
      const { header, record } = await renderTask(`${own.origin}/start`);
      assert.equal(header.outcome, 'ok', JSON.stringify(record.error));
      assert.deepEqual(header.links, []);
      assert.equal(record.navigationUrl, undefined);
      assert.deepEqual(
        own.arrivals.map((a) => a.path),
        ['/start'],
      );
    } finally {
      await own.close();
    }
    const nofollow =
      '<meta name="robots" content="nofollow"><title>n</title><script>location.assign("/next");</script>';
    const other = await startRedirectSite(() => ({ '/start': null, '/next': null }), { page: nofollow });
    try {
      const { header, record } = await renderTask(`${other.origin}/start`);
      assert.equal(header.outcome, 'ok', JSON.stringify(record.error));
      assert.deepEqual(header.links, [], 'a nofollow page’s navigation is not followed');
      assert.deepEqual(record.links, [`${other.origin}/next`], 'but it is recorded');
      assert.equal(record.navigationUrl, `${other.origin}/next`);
    } finally {
      await other.close();
    }
  });

  test('the cookies the document’s fetch was given reach the browser: the page’s requests carry them', async () => {
    const page =
      '<title>c</title><script>fetch("/whoami").then((r) => r.text()).then((who) => {' +
      ' const a = document.createElement("a"); a.href = "/user/" + who; document.body.append(a); });</script>';
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/login') {
        res.writeHead(302, { 'set-cookie': 'sid=s3cret; Path=/; HttpOnly', location: '/start' }).end();
      } else if (req.url === '/start') {
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'seen=1; Path=/' }).end(page);
      } else if (req.url === '/whoami') {
        seen.push(req.headers.cookie);
        const sid = /(?:^|; )sid=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] ?? 'nobody';
        res.writeHead(200, { 'content-type': 'text/plain' }).end(sid);
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const { header, record } = await renderTask(`${origin}/login`);
      assert.equal(header.outcome, 'ok', JSON.stringify(record.error));
      assert.equal(record.rendered, true);
      assert.deepEqual(header.links, [`${origin}/user/s3cret`], String(record.body));
      assert.deepEqual(seen, ['sid=s3cret; seen=1']);
      assert.equal((record.headers as Record<string, string>)['set-cookie'], undefined, 'never recorded');
    } finally {
      await closeServer(server);
    }
  });

  test("the run's headers reach the browser's requests, each host its own", async () => {
    const seen: { at: string; path: string; key: string | undefined; lang: string | undefined }[] = [];
    const listen = async (at: string, address: string, body: (otherOrigin: string) => string) => {
      let otherOrigin = '';
      const server = createServer((req, res) => {
        seen.push({
          at,
          path: req.url ?? '',
          key: req.headers['x-api-key'] as string | undefined,
          lang: req.headers['accept-language'],
        });
        if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(body(otherOrigin));
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, address, resolve));
      return {
        server,
        origin: `http://${address}:${(server.address() as AddressInfo).port}`,
        setOther: (o: string) => (otherOrigin = o),
      };
    };
    const b = await listen('b', '127.0.0.1', () => '');
    const a = await listen(
      'a',
      '127.0.0.1',
      (other) =>
        `<title>h</title><script>fetch("/api"); fetch("${other}/pixel", { mode: "no-cors" })</script>`,
    );
    a.setOther(b.origin);
    try {
      const page = await renderer.render(
        `${a.origin}/`,
        settings({
          headers: [
            { name: 'X-Api-Key', value: 'key-a', host: new URL(a.origin).host },
            { name: 'Accept-Language', value: 'de-CH' },
          ],
        }),
      );
      assert.equal(page.status, 200);
      await waitFor(() => seen.some((r) => r.path === '/pixel') && seen.some((r) => r.path === '/api'), {
        message: () => JSON.stringify(seen),
        timeoutMs: 5_000,
      });
      const byPath = new Map(seen.map(({ path, ...rest }) => [path, rest]));
      assert.deepEqual(byPath.get('/'), { at: 'a', key: 'key-a', lang: 'de-CH' });
      assert.deepEqual(byPath.get('/api'), { at: 'a', key: 'key-a', lang: 'de-CH' });
      assert.deepEqual(byPath.get('/pixel'), { at: 'b', key: undefined, lang: 'de-CH' });
    } finally {
      await closeServer(a.server);
      await closeServer(b.server);
    }
  });

  test("a run's session learns what the rendered page set, its scripts' cookies included, and only then", async () => {
    const server = createServer((req, res) => {
      if (req.url === '/scripted') {
        res
          .writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'srv=1; Path=/' })
          .end('<title>s</title><script>document.cookie = "js=1; path=/";</script>');
      } else if (req.url === '/quiet') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<title>q</title><p>nothing set');
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const session: WireCookie[] = [
      {
        name: 'old',
        value: 'x',
        domain: '127.0.0.1',
        path: '/',
        // Not a whole second: the browser keeps seconds, and must not make it look changed.
        expires: Date.now() + 3_600_123,
        hostOnly: true,
        secure: false,
        httpOnly: false,
      },
    ];
    try {
      const scripted = await renderTask(`${origin}/scripted`, { cookies: session });
      assert.equal(scripted.header.outcome, 'ok', JSON.stringify(scripted.record.error));
      const back = new Map((scripted.header.cookies ?? []).map((c) => [c.name, c.value]));
      assert.deepEqual(Object.fromEntries(back), { old: 'x', srv: '1', js: '1' });
      const quiet = await renderTask(`${origin}/quiet`, { cookies: session });
      assert.equal(quiet.header.outcome, 'ok');
      assert.equal(quiet.header.cookies, undefined, 'nothing set: nothing goes back');
      const without = await renderTask(`${origin}/scripted`);
      assert.equal(without.header.cookies, undefined, 'no session: the browser keeps its cookies');
    } finally {
      await closeServer(server);
    }
  });

  test('a network that never settles costs the idle cap, not the crawl', async () => {
    const started = Date.now();
    const page = await renderer.render(`${site.origin}/polling`, settings());
    const took = Date.now() - started;
    assert.match(page.body.toString('utf8'), /href="\/after-poll"/);
    assert.ok(took >= 2_500 && took < 8_000, `took ${took} ms with a 3 s idle cap`);
  });

  test('a page that never loads ends as RENDER_TIMEOUT, retriable, within its time limit', async () => {
    const started = Date.now();
    const err = await rejection(
      renderer.render(`${site.origin}/slow-load`, settings({ totalTimeoutMs: 1_500 })),
    );
    assert.equal(err.code, 'RENDER_TIMEOUT');
    assert.equal(err.retriable, true);
    assert.ok(Date.now() - started < 5_000);
  });

  test('a script that never yields cannot hold a page past its time limit', async () => {
    const started = Date.now();
    const err = await rejection(renderer.render(`${site.origin}/busy`, settings({ totalTimeoutMs: 2_000 })));
    assert.equal(err.code, 'RENDER_TIMEOUT');
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    const next = await renderer.render(`${site.origin}/static`, settings());
    assert.equal(next.status, 200, 'the renderer still works');
  });

  test('HTTP errors keep their status; network errors get the fetcher’s codes', async () => {
    const missing = await renderer.render(`${site.origin}/missing`, settings());
    assert.equal(missing.status, 404);
    const empty = await renderer.render(`${site.origin}/empty-500`, settings());
    assert.equal(empty.status, 500, 'an empty error answer keeps its status');
    const port = await freePort();
    const refused = await rejection(renderer.render(`http://127.0.0.1:${port}/`, settings()));
    assert.equal(refused.code, 'CONNECTION_REFUSED');
    assert.equal(refused.retriable, true);
  });

  test('a download is fetched instead of rendered', async () => {
    const fetcher = new Fetcher(settings(), createAgents({ allowPrivate: true }));
    const frame = await processTask(
      { taskId: 't3', url: `${site.origin}/download`, depth: 0, attempt: 1, parentUrl: null, render: true },
      {
        fetcher,
        crawlerId: 'test',
        render: (url, signal, document) => renderer.render(url, settings(), signal, document),
      },
    );
    const record = JSON.parse(decodeOutcomeFrame(frame).record.toString('utf8')) as Record<string, unknown>;
    assert.equal(record.outcome, 'ok');
    assert.equal(record.rendered, undefined);
    assert.equal(record.body, Buffer.from([1, 2, 3]).toString('base64'));
  });

  test('without allowPrivate, a loopback page is refused before any request reaches it', async () => {
    const before = site.requests.length;
    const err = await rejection(renderer.render(`${site.origin}/`, settings({ allowPrivate: false })));
    assert.equal(err.code, 'ADDRESS_BLOCKED');
    assert.equal(err.retriable, false);
    assert.equal(site.requests.length, before, 'nothing reached the server');
  });

  test('without allowPrivate, HTTPS goes through the guard’s tunnel: refused or failed, with the right code', async () => {
    const before = site.requests.length;
    const blocked = await rejection(
      renderer.render(`https://127.0.0.1:${site.port}/`, settings({ allowPrivate: false })),
    );
    assert.equal(blocked.code, 'ADDRESS_BLOCKED');
    assert.equal(site.requests.length, before, 'nothing reached the server');
    const port = await freePort();
    const refused = await rejection(
      renderer.render(`https://public.test:${port}/`, settings({ allowPrivate: false })),
    );
    assert.equal(refused.code, 'CONNECTION_REFUSED');
  });

  test('without allowPrivate, a page’s fetches, redirects and WebSockets cannot reach loopback', async () => {
    const page = await renderer.render(
      `http://public.test:${site.port}/sneaky`,
      settings({ allowPrivate: false }),
    );
    assert.equal(page.status, 200);
    assert.match(page.body.toString('utf8'), /href="\/sneaky-done"/, 'the page itself rendered');
    const paths = site.paths();
    assert.ok(paths.includes('/redirect-to-loopback'), 'the iframe was loaded through the guard');
    await waitFor(() => site.paths().includes('WS /allowed-ws'), {
      timeoutMs: 5_000,
      message: 'a WebSocket to the page’s own (public) host passes the guard',
    });
    for (const secret of ['/secret-fetch', 'WS /secret-ws', '/secret-redirect']) {
      assert.ok(!paths.includes(secret), `${secret} must not reach the server (got ${paths.join(' ')})`);
    }
  });

  test('a browser that went away is launched again for the next page', async () => {
    const before = host.launches;
    await renderer.render(`${site.origin}/static`, settings());
    const browser = launched.at(-1);
    assert.ok(browser);
    await browser.close(); // as if it crashed
    const page = await renderer.render(`${site.origin}/static`, settings());
    assert.equal(page.status, 200);
    assert.equal(host.launches, before + 1);
  });

  test('a withdrawn render fails at once with CONNECTION_ABORTED, and the browser drops its page', async () => {
    const count = (path: string): number => site.paths().filter((p) => p === path).length;
    const stalled = count('/never.js');
    const withdraw = new AbortController();
    const rendering = renderer.render(
      `${site.origin}/slow-load`,
      settings({ totalTimeoutMs: 30_000 }),
      withdraw.signal,
    );
    await waitFor(() => count('/never.js') > stalled, { timeoutMs: 10_000 });
    assert.equal(site.held(), 1, 'the page waits on its script');
    const abortedAt = Date.now();
    withdraw.abort();
    const err = await rejection(rendering);
    assert.equal(err.code, 'CONNECTION_ABORTED');
    assert.ok(Date.now() - abortedAt < 3_000, `failed ${Date.now() - abortedAt} ms after the abort`);
    // The page's context is closed: the browser lets go of the request it was waiting on.
    await waitFor(() => site.held() === 0, { timeoutMs: 5_000 });
  });

  test('a render withdrawn before it starts, or while it waits for a slot, opens no page', async () => {
    const count = (path: string): number => site.paths().filter((p) => p === path).length;
    const requestsBefore = site.requests.length;
    const already = await rejection(
      renderer.render(`${site.origin}/static`, settings(), AbortSignal.abort()),
    );
    assert.equal(already.code, 'CONNECTION_ABORTED');
    assert.equal(site.requests.length, requestsBefore, 'no request for an already withdrawn task');

    // Both slots (concurrency 2) held by pages that never load; a third render queues behind them.
    const holders = [new AbortController(), new AbortController()];
    const stalled = count('/never.js');
    const holding = holders.map((c) =>
      rejection(renderer.render(`${site.origin}/slow-load`, settings({ totalTimeoutMs: 30_000 }), c.signal)),
    );
    await waitFor(() => count('/never.js') >= stalled + 2, { timeoutMs: 10_000 });
    const staticBefore = count('/static');
    const queued = new AbortController();
    const waiting = rejection(renderer.render(`${site.origin}/static`, settings(), queued.signal));
    queued.abort();
    assert.equal((await waiting).code, 'CONNECTION_ABORTED');
    for (const c of holders) c.abort();
    for (const err of await Promise.all(holding)) assert.equal(err.code, 'CONNECTION_ABORTED');
    // The withdrawn render never took a slot: both are free, and the next two pages render at once.
    const pages = await Promise.all([1, 2].map(() => renderer.render(`${site.origin}/static`, settings())));
    assert.deepEqual(
      pages.map((p) => p.status),
      [200, 200],
    );
    assert.equal(count('/static'), staticBefore + 2, 'the withdrawn render sent no request');
  });
});
