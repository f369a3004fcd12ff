import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { frameMaskFor } from '../../client/crawler/frame-mask.js';

/**
 * A WebSocket endpoint (ws's own server) that also hands over the raw bytes of the first frame a
 * client sends, as they came off the socket.
 */
function rawEndpoint(): Promise<{ server: Server; url: string; firstFrame: () => Promise<Buffer> }> {
  let deliver: (frame: Buffer) => void = () => undefined;
  const frame = new Promise<Buffer>((resolve) => (deliver = resolve));
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer();
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    socket.prependOnceListener('data', (chunk: Buffer) => deliver(chunk));
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('error', () => undefined));
  });
  server.on('close', () => wss.close());
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `ws://127.0.0.1:${port}/crawlers`, firstFrame: () => frame });
    }),
  );
}

describe('the masking of crawler frames', () => {
  let endpoint: Awaited<ReturnType<typeof rawEndpoint>>;
  before(async () => {
    endpoint = await rawEndpoint();
  });
  after(() => {
    endpoint.server.closeAllConnections();
    endpoint.server.close();
  });

  test('over loopback the mask on the wire is zero and the payload goes as it is', async () => {
    const ws = new WebSocket(endpoint.url, { generateMask: frameMaskFor(endpoint.url) });
    ws.on('error', () => undefined);
    ws.on('open', () => ws.send('a body "chosen" by a stranger'));
    const frame = await endpoint.firstFrame();
    ws.terminate();
    assert.equal(frame[1]! & 0x80, 0x80, 'the MASK bit is set, as RFC 6455 wants of a client');
    const length = frame[1]! & 0x7f;
    assert.deepEqual([...frame.subarray(2, 6)], [0, 0, 0, 0]);
    assert.equal(frame.subarray(6, 6 + length).toString(), 'a body "chosen" by a stranger');
  });

  test('TLS and loopback names get the zero mask; plain ws:// across a network keeps ws’s random one', () => {
    for (const url of [
      'ws://127.0.0.1:8700/crawlers',
      'ws://[::1]:8700/',
      'ws://localhost:1/',
      'wss://sched.example:8700/',
    ]) {
      const generate = frameMaskFor(url);
      assert.ok(generate, url);
      const mask = Buffer.from([1, 2, 3, 4]);
      generate(mask);
      assert.deepEqual([...mask], [0, 0, 0, 0], url);
    }
    for (const url of ['ws://10.0.0.5:8700/crawlers', 'ws://sched.example:8700/', 'not a url']) {
      assert.equal(frameMaskFor(url), undefined, url);
    }
  });
});
