import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { RoutedFetcher } from '../../client/crawler/fetch/routed-fetcher.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';

const SETTINGS: FetchSettings = {
  userAgent: 'ackcrawl-test',
  connectTimeoutMs: 1_000,
  responseTimeoutMs: 1_000,
  totalTimeoutMs: 2_000,
  maxRedirects: 3,
  maxBodyBytes: 1024,
  allowPrivate: true,
};

test('a request on a kept-alive socket the server hung up on is sent again on a fresh one', async () => {
  // Answers one request per connection, without `Connection: close`, then hangs up: the client
  // keeps the socket and its next request on it dies with a reset before reaching the server.
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', (data) => {
      requests.push(/^[A-Z]+ (\S+)/.exec(data.toString('latin1'))?.[1] ?? '?');
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));
  try {
    for (let i = 0; i < 5; i++) {
      const first = await fetcher.fetch(`http://127.0.0.1:${port}/robots.txt`);
      const second = await fetcher.fetch(`http://127.0.0.1:${port}/page-${i}`);
      assert.equal(first.status, 404);
      assert.equal(second.status, 404, 'the second request got its answer');
    }
    assert.equal(
      requests.filter((r) => r.startsWith('/page-')).length,
      5,
      'each page reached the server once',
    );
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a request written again after a stale socket reports its start again, after the reset', async () => {
  // Answers the first request of each connection and keeps it alive; resets the connection on
  // its second request, unread: to the client that is a stale socket, every time.
  const events: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let served = 0;
    socket.on('data', (data) => {
      const path = /^[A-Z]+ (\S+)/.exec(data.toString('latin1'))?.[1] ?? '?';
      if (served++ === 0) {
        events.push(`served ${path}`);
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      } else {
        events.push(`reset ${path}`);
        socket.resetAndDestroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agents = createAgents({ allowPrivate: true });
  const fetcher = new Fetcher(SETTINGS, agents);
  // As the crawler fetches: through the routed fetcher (direct, no proxies).
  const routed = new RoutedFetcher({
    fetcher,
    userAgent: () => 'ackcrawl-test',
    pool: null,
    agentsFor: () => agents,
  });
  try {
    await routed.fetch(`http://127.0.0.1:${port}/robots.txt`);
    const page = await routed.fetch(`http://127.0.0.1:${port}/page`, {
      onRequestSent: () => events.push('sent /page'),
    });
    assert.equal(page.status, 200);
    // Written on the kept-alive socket (reset there, before the server read it as a request),
    // then on a fresh one: the second report is the write that reached the server.
    assert.deepEqual(events, [
      'served /robots.txt',
      'sent /page',
      'reset /page',
      'sent /page',
      'served /page',
    ]);
  } finally {
    agents.http.destroy();
    agents.https.destroy();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
