import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { socketOf, TurnWrites } from '../../client/crawler/turn-writes.js';

interface Pair {
  client: WebSocket;
  received: string[];
  /** Calls that handed bytes to the kernel (`_write` or `_writev`) on the client's socket. */
  writes: () => number;
  close: () => Promise<void>;
}

async function pair(): Promise<Pair> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const received: string[] = [];
  server.on('connection', (ws) => ws.on('message', (data) => received.push(String(data))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  assert.equal(socketOf(client), null, 'no socket while connecting');
  await once(client, 'open');
  const socket = socketOf(client) as Duplex & Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  assert.ok(socket !== null && typeof socket.cork === 'function', 'ws keeps its socket as _socket');
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...args: unknown[]) => {
      writes += 1;
      return original(...args);
    };
  }
  return {
    client,
    received,
    writes: () => writes,
    close: async () => {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${String(condition)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const messages = Array.from({ length: 20 }, (_, i) => `m${i}`);

test('what is sent in one turn goes out in one write, what beforeRelease sends with it', async (t) => {
  const p = await pair();
  t.after(p.close);
  const turn = new TurnWrites(() => p.client.send('last'));
  for (const m of messages) {
    turn.hold(p.client);
    p.client.send(m);
  }
  await until(() => p.received.length >= 21);
  assert.deepEqual(p.received, [...messages, 'last']);
  assert.equal(p.writes(), 1);
  // The next turn is held again, and on its own.
  turn.hold(p.client);
  p.client.send('again');
  await until(() => p.received.length >= 23);
  assert.deepEqual(p.received.slice(21), ['again', 'last']);
  assert.equal(p.writes(), 2);
});

test('without it, each message is a write of its own', async (t) => {
  const p = await pair();
  t.after(p.close);
  for (const m of messages) p.client.send(m);
  await until(() => p.received.length >= 20);
  assert.deepEqual(p.received, messages);
  assert.equal(p.writes(), 20);
});

test('a socket closed while held is left alone, and a closed WebSocket is not held', async (t) => {
  const p = await pair();
  t.after(p.close);
  let released = 0;
  const turn = new TurnWrites(() => void (released += 1));
  turn.hold(p.client);
  p.client.terminate();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(released, 1);
  await once(p.client, 'close');
  turn.hold(p.client);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(released, 1, 'nothing held on a closed WebSocket');
});
