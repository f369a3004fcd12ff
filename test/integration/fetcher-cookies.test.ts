import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { closeServer } from '../helpers/redirect-site.js';

const settings: FetchSettings = {
  userAgent: 'ackcrawl-test/cookies',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  totalTimeoutMs: 5_000,
  maxRedirects: 5,
  maxBodyBytes: 64 * 1024,
  allowPrivate: true,
};

async function listen(
  host: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Server> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

const portOf = (server: Server): number => (server.address() as AddressInfo).port;

describe('a fetch keeps the cookies its responses set, for its own requests only', () => {
  let site: Server;
  let other: Server;
  let origin: string;
  let otherOrigin: string;
  /** The Cookie header of each request, by path, in order. */
  const sent: { path: string; cookie: string | undefined }[] = [];

  before(async () => {
    // 127.0.0.2 is loopback too, and another host to a cookie (cookies do not tell ports apart).
    other = await listen('127.0.0.2', (req, res) => {
      sent.push({ path: `other${req.url}`, cookie: req.headers.cookie });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.headers.cookie ?? '');
    });
    otherOrigin = `http://127.0.0.2:${portOf(other)}`;
    site = await listen('127.0.0.1', (req, res) => {
      sent.push({ path: req.url ?? '', cookie: req.headers.cookie });
      const cookie = req.headers.cookie ?? '';
      switch (req.url) {
        case '/login':
          // The "cookie check" many sites greet a new visitor with: set, then send back.
          res.writeHead(302, {
            'set-cookie': ['sid=abc; Path=/; HttpOnly', 'theme=dark; Path=/'],
            location: '/home',
          });
          res.end();
          return;
        case '/home':
          if (/(^|; )sid=abc(;|$)/.test(cookie))
            res.writeHead(200, { 'content-type': 'text/plain' }).end('welcome');
          else res.writeHead(302, { location: '/login' }).end();
          return;
        case '/away':
          res.writeHead(302, { 'set-cookie': 'a=1; Path=/', location: `${otherOrigin}/echo` }).end();
          return;
        case '/bad':
          res.writeHead(200, {
            'content-type': 'text/plain',
            // No name, a public suffix as domain, another site's domain: a browser keeps none of them.
            'set-cookie': ['=novalue', 'x=1; Domain=com', 'y=2; Domain=other.test'],
          });
          res.end('fine');
          return;
        default:
          res.writeHead(200, { 'content-type': 'text/plain' }).end(cookie);
      }
    });
    origin = `http://127.0.0.1:${portOf(site)}`;
  });
  after(async () => {
    await closeServer(site);
    await closeServer(other);
  });

  const fetcher = (): Fetcher => new Fetcher(settings, createAgents({ allowPrivate: true }));

  test('a redirect that sets a cookie gets it back on the next hop; the page hands it on', async () => {
    sent.length = 0;
    const page = await fetcher().fetch(`${origin}/login`);
    assert.equal(page.status, 200);
    assert.equal(page.body.toString(), 'welcome');
    assert.deepEqual(page.redirects, [`${origin}/home`]);
    assert.deepEqual(sent, [
      { path: '/login', cookie: undefined },
      { path: '/home', cookie: 'sid=abc; theme=dark' },
    ]);
    assert.equal(page.headers['set-cookie'], undefined, 'cookies are never recorded');
    const cookies = (await page.cookies?.forBrowser()) ?? [];
    assert.deepEqual(
      cookies.map((c) => [c.name, c.value, c.domain, c.path, c.httpOnly, c.expires]),
      [
        ['sid', 'abc', '127.0.0.1', '/', true, -1],
        ['theme', 'dark', '127.0.0.1', '/', false, -1],
      ],
    );
  });

  test('nothing carries over to the next fetch, even of the same fetcher', async () => {
    const f = fetcher();
    await f.fetch(`${origin}/login`);
    sent.length = 0;
    const page = await f.fetch(`${origin}/echo`);
    assert.equal(page.body.toString(), '');
    assert.deepEqual(sent, [{ path: '/echo', cookie: undefined }]);
    assert.equal(page.cookies, undefined);
  });

  test('a cookie is not sent to another host the fetch is redirected to', async () => {
    sent.length = 0;
    const page = await fetcher().fetch(`${origin}/away`);
    assert.equal(page.finalUrl, `${otherOrigin}/echo`);
    assert.deepEqual(sent, [
      { path: '/away', cookie: undefined },
      { path: 'other/echo', cookie: undefined },
    ]);
  });

  test('cookies a browser would refuse are dropped, and cost the fetch nothing', async () => {
    const page = await fetcher().fetch(`${origin}/bad`);
    assert.equal(page.status, 200);
    assert.equal(page.body.toString(), 'fine');
    assert.equal(page.cookies, undefined);
  });
});
