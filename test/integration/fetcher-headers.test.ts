import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import type { RequestHeader } from '../../shared/protocol/request-headers.js';
import { closeServer } from '../helpers/redirect-site.js';

const base: FetchSettings = {
  userAgent: 'ackcrawl-test/headers',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 2_000,
  totalTimeoutMs: 5_000,
  maxRedirects: 5,
  maxBodyBytes: 64 * 1024,
  allowPrivate: true,
};

/** Every request: which server, its path, and the headers the test looks at. */
interface Seen {
  at: string;
  path: string;
  key: string | undefined;
  auth: string | undefined;
  lang: string | undefined;
  ua: string | undefined;
  inm: string | undefined;
}

describe("a fetch sends the run's headers of each hop's own host", () => {
  const seen: Seen[] = [];
  let a: Server;
  let b: Server;
  let hostA: string;
  let hostB: string;

  const listen = async (name: string, host: string, redirect: (path: string) => string | null) => {
    const server = createServer((req: IncomingMessage, res) => {
      seen.push({
        at: name,
        path: req.url ?? '',
        key: req.headers['x-api-key'] as string | undefined,
        auth: req.headers.authorization,
        lang: req.headers['accept-language'],
        ua: req.headers['user-agent'],
        inm: req.headers['if-none-match'] as string | undefined,
      });
      const location = redirect(req.url ?? '');
      if (location) res.writeHead(302, { location }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return server;
  };

  before(async () => {
    // Two loopback addresses: two hosts, as patterns and got's origin check see them.
    b = await listen('b', '127.0.0.2', (path) => (path === '/back' ? `http://${hostA}/home` : null));
    hostB = `127.0.0.2:${(b.address() as AddressInfo).port}`;
    a = await listen('a', '127.0.0.1', (path) =>
      path === '/away' ? `http://${hostB}/there` : path === '/round' ? `http://${hostB}/back` : null,
    );
    hostA = `127.0.0.1:${(a.address() as AddressInfo).port}`;
  });
  after(async () => {
    await closeServer(a);
    await closeServer(b);
  });

  const fetcher = (headers: RequestHeader[]): Fetcher =>
    new Fetcher({ ...base, headers }, createAgents({ allowPrivate: true }));
  const run = (): RequestHeader[] => [
    { name: 'X-Api-Key', value: 'key-a', host: hostA },
    { name: 'Authorization', value: 'Bearer for-b', host: '127.0.0.2' },
    { name: 'Accept-Language', value: 'fr' },
    { name: 'Accept-Language', value: 'de', host: hostB },
  ];

  test('each host gets its own, the most specific pattern winning, beside the fetch and route headers', async () => {
    seen.length = 0;
    const f = fetcher(run());
    await f.fetch(`http://${hostA}/page`, { headers: { 'if-none-match': '"v1"' }, userAgent: 'rotated/1' });
    await f.fetch(`http://${hostB}/page`);
    assert.deepEqual(seen, [
      { at: 'a', path: '/page', key: 'key-a', auth: undefined, lang: 'fr', ua: 'rotated/1', inm: '"v1"' },
      {
        at: 'b',
        path: '/page',
        key: undefined,
        auth: 'Bearer for-b',
        lang: 'de',
        ua: 'ackcrawl-test/headers',
        inm: undefined,
      },
    ]);
  });

  test("a redirect to another host takes the last host's headers out and puts the next host's in", async () => {
    seen.length = 0;
    const page = await fetcher(run()).fetch(`http://${hostA}/round`);
    assert.equal(page.finalUrl, `http://${hostA}/home`);
    assert.deepEqual(
      seen.map(({ at, path, key, auth, lang }) => ({ at, path, key, auth, lang })),
      [
        { at: 'a', path: '/round', key: 'key-a', auth: undefined, lang: 'fr' },
        { at: 'b', path: '/back', key: undefined, auth: 'Bearer for-b', lang: 'de' },
        { at: 'a', path: '/home', key: 'key-a', auth: undefined, lang: 'fr' },
      ],
    );
  });

  test('a run without headers sends none of its own', async () => {
    seen.length = 0;
    await fetcher([]).fetch(`http://${hostA}/away`);
    assert.deepEqual(
      seen.map(({ at, key, auth, lang }) => ({ at, key, auth, lang })),
      [
        { at: 'a', key: undefined, auth: undefined, lang: undefined },
        { at: 'b', key: undefined, auth: undefined, lang: undefined },
      ],
    );
  });
});
