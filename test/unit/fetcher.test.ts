import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createAgents, type Agents } from '../../client/crawler/fetch/agents.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';
import { Fetcher, statusFailure, type FetchedPage } from '../../client/crawler/fetch/fetcher.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { waitFor } from '../helpers/wait-for.js';

const MAX_BODY = 64 * 1024;

const settings: FetchSettings = {
  userAgent: 'ackcrawl-test/1',
  connectTimeoutMs: 2_000,
  responseTimeoutMs: 300,
  totalTimeoutMs: 5_000,
  maxRedirects: 3,
  maxBodyBytes: MAX_BODY,
  allowPrivate: true,
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const routes: Record<string, Handler> = {
  '/ok': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-secret': 'dropped' });
    res.end('<p>hello</p>');
  },
  '/echo-ua': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.headers['user-agent']);
  },
  '/r1': (_req, res) => {
    res.writeHead(302, { location: '/r2' });
    res.end();
  },
  '/r2': (_req, res) => {
    res.writeHead(301, { location: '/ok' });
    res.end();
  },
  '/loop': (_req, res) => {
    res.writeHead(302, { location: '/loop' });
    res.end();
  },
  '/exact': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': MAX_BODY });
    res.end(Buffer.alloc(MAX_BODY, 1));
  },
  '/big-declared': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': MAX_BODY + 1 });
    res.end(Buffer.alloc(MAX_BODY + 1, 0x61));
  },
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }); // no content-length: chunked
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    for (let i = 0; i < 8; i++) res.write(chunk);
    res.end();
  },
  '/gzip': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    res.end(gzipSync('compressed hello'));
  },
  '/bomb': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    res.end(BOMB);
  },
  '/bad-gzip': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    res.end('this is not gzip at all, just text pretending');
  },
  '/slow': () => {
    // Never answers; the fetcher's response timeout must end it.
  },
  '/stall-body': (req, res) => {
    // Headers and part of the body, then nothing: only an abort (or the timeouts) ends it.
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<p>part');
    stalled.push(req);
  },
  '/404': (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end('not here');
  },
  '/503': (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/html' });
    res.end('busy');
  },
  '/429': (_req, res) => {
    res.writeHead(429, { 'retry-after': '7' });
    res.end();
  },
};

/** Requests to /stall-body, as the server got them. */
const stalled: IncomingMessage[] = [];

/** 8 MB of zeros: about 8 KB compressed, far past the cap once inflated. */
const BOMB = gzipSync(Buffer.alloc(8 * 1024 * 1024));

async function fetchError(promise: Promise<FetchedPage>): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof FetchError, `a FetchError, got ${String(err)}`);
    return err;
  }
  assert.fail('the fetch should have failed');
}

describe('Fetcher against a local server', () => {
  let server: Server;
  let base: string;
  const agents: Agents[] = [];
  let fetcher: Fetcher;

  before(async () => {
    server = createServer((req, res) => {
      const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
      if (route) route(req, res);
      else {
        res.writeHead(500);
        res.end('no route');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const open = createAgents({ allowPrivate: true });
    agents.push(open);
    fetcher = new Fetcher(settings, open);
  });

  after(async () => {
    for (const a of agents) {
      a.http.destroy();
      a.https.destroy();
    }
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a 200 page: status, body, content type, kept headers only, our user agent', async () => {
    const page = await fetcher.fetch(`${base}/ok`);
    assert.equal(page.status, 200);
    assert.equal(page.body.toString(), '<p>hello</p>');
    assert.equal(page.contentType, 'text/html; charset=utf-8');
    assert.equal(page.finalUrl, `${base}/ok`);
    assert.deepEqual(page.redirects, []);
    assert.equal(page.headers['x-secret'], undefined);
    assert.equal(statusFailure(page), null);
    assert.equal((await fetcher.fetch(`${base}/echo-ua`)).body.toString(), settings.userAgent);
  });

  test('redirects are followed and recorded, with the final URL', async () => {
    const page = await fetcher.fetch(`${base}/r1`);
    assert.equal(page.status, 200);
    assert.equal(page.finalUrl, `${base}/ok`);
    assert.deepEqual(page.redirects, [`${base}/r2`, `${base}/ok`]);
    assert.equal(page.body.toString(), '<p>hello</p>');
  });

  test('a redirect loop ends as a final TOO_MANY_REDIRECTS', async () => {
    const err = await fetchError(fetcher.fetch(`${base}/loop`));
    assert.equal(err.code, 'TOO_MANY_REDIRECTS');
    assert.equal(err.retriable, false);
  });

  test('a body of exactly maxBodyBytes is accepted', async () => {
    const page = await fetcher.fetch(`${base}/exact`);
    assert.equal(page.body.length, MAX_BODY);
  });

  test('a body over maxBodyBytes is BODY_TOO_LARGE, declared by content-length or not', async () => {
    for (const path of ['/big-declared', '/big-chunked']) {
      const err = await fetchError(fetcher.fetch(`${base}${path}`));
      assert.equal(err.code, 'BODY_TOO_LARGE', path);
      assert.equal(err.retriable, false, path);
      assert.equal(err.httpStatus, 200, path);
    }
  });

  test('a gzip body is inflated', async () => {
    const page = await fetcher.fetch(`${base}/gzip`);
    assert.equal(page.body.toString(), 'compressed hello');
  });

  test('a gzip bomb (small on the wire, huge inflated) is BODY_TOO_LARGE', async () => {
    assert.ok(BOMB.length < MAX_BODY, 'the compressed bomb is under the cap');
    const err = await fetchError(fetcher.fetch(`${base}/bomb`));
    assert.equal(err.code, 'BODY_TOO_LARGE');
    assert.match(err.message, /after decompression/);
  });

  test('a body that claims gzip but is not is BAD_CONTENT_ENCODING', async () => {
    const err = await fetchError(fetcher.fetch(`${base}/bad-gzip`));
    assert.equal(err.code, 'BAD_CONTENT_ENCODING');
    assert.equal(err.retriable, false);
  });

  test('an aborted signal stops the fetch at once: CONNECTION_ABORTED, and the server sees the socket close', async () => {
    const controller = new AbortController();
    const fetching = fetcher.fetch(`${base}/stall-body`, { signal: controller.signal });
    await waitFor(() => stalled.length === 1, { message: 'the request reached the server' });
    const closed = new Promise<void>((resolve) => stalled[0]?.socket.once('close', () => resolve()));
    const started = Date.now();
    controller.abort();
    const err = await fetchError(fetching);
    assert.equal(err.code, 'CONNECTION_ABORTED');
    assert.ok(Date.now() - started < 1_000, 'at once, not at a timeout');
    await closed;
    const before = stalled.length;
    const again = await fetchError(fetcher.fetch(`${base}/stall-body`, { signal: controller.signal }));
    assert.equal(again.code, 'CONNECTION_ABORTED', 'an already aborted signal sends nothing');
    assert.equal(stalled.length, before);
  });

  test('a server that never answers is a retriable TIMEOUT', async () => {
    const started = Date.now();
    const err = await fetchError(fetcher.fetch(`${base}/slow`));
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.ok(Date.now() - started < 3_000, 'ended by the response timeout, not the total one');
  });

  test('statusFailure: 404 is final, 503 retriable, 429 retriable with its Retry-After', async () => {
    const notFound = statusFailure(await fetcher.fetch(`${base}/404`));
    assert.equal(notFound?.code, 'HTTP_404');
    assert.equal(notFound?.retriable, false);
    assert.equal(notFound?.httpStatus, 404);

    const busy = statusFailure(await fetcher.fetch(`${base}/503`));
    assert.equal(busy?.code, 'HTTP_503');
    assert.equal(busy?.retriable, true);
    assert.equal(busy?.retryAfterMs, null);

    const limited = statusFailure(await fetcher.fetch(`${base}/429`));
    assert.equal(limited?.code, 'HTTP_429');
    assert.equal(limited?.retriable, true);
    assert.equal(limited?.retryAfterMs, 7_000);
  });

  test('with private addresses not allowed, 127.0.0.1 is refused with ADDRESS_BLOCKED', async () => {
    const filtered = createAgents({ allowPrivate: false });
    agents.push(filtered);
    const strict = new Fetcher({ ...settings, allowPrivate: false }, filtered);
    const err = await fetchError(strict.fetch(`${base}/ok`));
    assert.equal(err.code, 'ADDRESS_BLOCKED');
    assert.equal(err.retriable, false);
    const viaName = await fetchError(strict.fetch(`${base.replace('127.0.0.1', 'localhost')}/ok`));
    assert.equal(viaName.code, 'ADDRESS_BLOCKED', 'a name that resolves to loopback is refused too');
  });
});
