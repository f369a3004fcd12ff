import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { SchedulerClient, type SchedulerClientOptions } from '../../client/crawler/scheduler-client.js';
import { silentLogger } from '../../shared/logger.js';
import type { CrawlerTextMessage, FetchSettings, WireTask } from '../../shared/protocol/messages.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import { waitFor } from '../helpers/wait-for.js';

const FETCH: FetchSettings = {
  userAgent: 'test',
  connectTimeoutMs: 1000,
  responseTimeoutMs: 1000,
  totalTimeoutMs: 2000,
  maxRedirects: 3,
  maxBodyBytes: 1024,
  allowPrivate: true,
};

/** One connection as a scheduler sees it: what the crawler sent, and a way to answer. */
class Peer {
  readonly text: CrawlerTextMessage[] = [];
  readonly binary: Buffer[] = [];
  closed = false;
  constructor(
    readonly ws: WebSocket,
    /** The TCP socket under it: paused, the crawler's writes back up. */
    readonly socket: Socket,
  ) {
    ws.on('message', (data, isBinary) => {
      const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) this.binary.push(buffer);
      else this.text.push(JSON.parse(buffer.toString('utf8')) as CrawlerTextMessage);
    });
    ws.on('close', () => (this.closed = true));
  }
  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }
  welcome(): void {
    this.send({
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      sessionId: 's',
      heartbeatMs: 10_000,
      fetch: FETCH,
    });
  }
  tasks(...ids: string[]): void {
    this.send({ type: 'tasks', items: ids.map(task) });
  }
  of<T extends CrawlerTextMessage['type']>(type: T): Extract<CrawlerTextMessage, { type: T }>[] {
    return this.text.filter((m): m is Extract<CrawlerTextMessage, { type: T }> => m.type === type);
  }
  credit(): number {
    return this.of('credit').reduce((sum, m) => sum + m.n, 0);
  }
  ids(type: 'working' | 'release'): string[] {
    return this.of(type).flatMap((m) => m.taskIds);
  }
}

function task(taskId: string): WireTask {
  return { taskId, url: `http://a.test/${taskId}`, depth: 0, attempt: 1, parentUrl: null };
}

/** Work that finishes when the test says so (or fails, or hangs). */
class Gates {
  private readonly pending = new Map<
    string,
    { resolve: (frame: Buffer) => void; reject: (e: Error) => void }
  >();
  started: string[] = [];
  /** The signal each task was started with. */
  readonly signals = new Map<string, AbortSignal>();
  readonly work: SchedulerClientOptions['work'] = (t, _settings, _started, signal) =>
    new Promise<Buffer>((resolve, reject) => {
      this.started.push(t.taskId);
      this.signals.set(t.taskId, signal);
      this.pending.set(t.taskId, { resolve, reject });
    });
  finish(taskId: string, frame = Buffer.from(`outcome:${taskId}`)): void {
    this.pending.get(taskId)?.resolve(frame);
    this.pending.delete(taskId);
  }
  fail(taskId: string, err: Error): void {
    this.pending.get(taskId)?.reject(err);
    this.pending.delete(taskId);
  }
}

describe('SchedulerClient', () => {
  let wss: WebSocketServer;
  let url: string;
  const peers: Peer[] = [];
  const clients: SchedulerClient[] = [];

  before(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    wss.on('connection', (ws, req) => peers.push(new Peer(ws, req.socket)));
  });
  after(async () => {
    for (const client of clients) await client.close(0);
    for (const peer of peers) peer.ws.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });

  /** A client with `concurrency`, connected and welcomed; returns it with its scheduler side. */
  async function connect(
    gates: Gates,
    concurrency: number,
  ): Promise<{ client: SchedulerClient; peer: Peer }> {
    const before = peers.length;
    const client = new SchedulerClient({
      url,
      token: 'unit-test-token',
      crawlerId: 'c1',
      concurrency,
      logger: silentLogger(),
      work: gates.work,
      failed: (t, err) => Buffer.from(`failed:${t.taskId}:${(err as Error).message}`),
    });
    clients.push(client);
    client.start();
    await waitFor(() => peers.length > before && (peers[before]?.of('hello').length ?? 0) === 1, {
      message: 'hello',
    });
    const peer = peers[before] as Peer;
    peer.welcome();
    await waitFor(() => peer.credit() > 0, { message: 'first credit' });
    return { client, peer };
  }

  test('a task whose work rejects ends as a failure outcome, and the crawler goes on', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 2);
    const creditBefore = peer.credit();
    peer.tasks('t1');
    await waitFor(() => gates.started.includes('t1'), { message: 't1 started' });
    gates.fail('t1', new Error('boom'));
    await waitFor(() => peer.binary.length === 1, { message: 'an outcome for t1' });
    assert.equal(peer.binary[0]?.toString(), 'failed:t1:boom');
    await waitFor(() => peer.credit() === creditBefore + 1, { message: 'its slot asked for again' });
  });

  test('it says which tasks it starts before starting them, and only those', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 2);
    peer.tasks('a', 'b', 'c');
    await waitFor(() => gates.started.length === 2, { message: 'two started' });
    assert.deepEqual(peer.ids('working'), ['a', 'b'], 'c waits in the queue');
    gates.finish('a');
    await waitFor(() => peer.ids('working').includes('c'), { message: 'c started once a slot freed' });
    assert.deepEqual(peer.ids('working'), ['a', 'b', 'c']);
    assert.deepEqual(gates.started, ['a', 'b', 'c']);
  });

  test('drain: queued tasks handed back at once, running ones delivered, then bye; no more credit', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 1);
    peer.tasks('run', 'queued-1', 'queued-2');
    await waitFor(() => gates.started.includes('run'), { message: 'run started' });
    const creditBefore = peer.credit();
    peer.send({ type: 'drain' });
    await waitFor(() => peer.ids('release').length === 2, { message: 'queued tasks released' });
    assert.deepEqual(peer.ids('release').sort(), ['queued-1', 'queued-2']);
    peer.tasks('late');
    await waitFor(() => peer.ids('release').includes('late'), { message: 'a task sent meanwhile released' });
    assert.equal(peer.of('bye').length, 0, 'no bye while a task runs');
    gates.finish('run');
    await waitFor(() => peer.of('bye').length === 1, { message: 'bye' });
    assert.deepEqual(
      peer.binary.map((b) => b.toString()),
      ['outcome:run'],
    );
    assert.equal(peer.credit(), creditBefore, 'no credit asked for while draining');
    assert.deepEqual(gates.started, ['run'], 'nothing else was started');
  });

  test('close (SIGTERM): what still runs at the deadline is handed back before the bye', async () => {
    const gates = new Gates();
    const { client, peer } = await connect(gates, 2);
    peer.tasks('quick', 'stuck', 'queued');
    await waitFor(() => gates.started.length === 2, { message: 'two started' });
    const closing = client.close(300);
    await waitFor(() => peer.ids('release').includes('queued'), { message: 'queued released at once' });
    gates.finish('quick');
    await closing;
    assert.deepEqual(
      peer.binary.map((b) => b.toString()),
      ['outcome:quick'],
    );
    assert.deepEqual(peer.ids('release').sort(), ['queued', 'stuck']);
    const order = peer.text.map((m) => m.type);
    assert.ok(order.lastIndexOf('release') < order.indexOf('bye'), order.join(','));
    await waitFor(() => peer.closed, { message: 'connection closed' });
    gates.finish('stuck');
  });

  test('after a reconnect, a slot freed by the old connection’s task is asked for on the new one', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 2);
    const full = peer.credit();
    peer.tasks('old');
    await waitFor(() => gates.started.includes('old'), { message: 'old started' });
    const count = peers.length;
    peer.ws.terminate();
    await waitFor(() => peers.length > count && (peers[count]?.of('hello').length ?? 0) === 1, {
      timeoutMs: 5_000,
      message: 'reconnected',
    });
    const next = peers[count] as Peer;
    next.welcome();
    await waitFor(() => next.credit() === full - 1, { message: 'credit less the busy slot' });
    gates.finish('old');
    await waitFor(() => next.credit() === full, { message: 'the freed slot asked for' });
    assert.equal(next.binary.length, 0, 'the old task’s outcome is not delivered on the new connection');
  });

  test('a task whose `working` had not left when the connection closed is never started', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 1);
    peer.tasks('big', 'next');
    await waitFor(() => gates.started.includes('big'), { message: 'big started' });
    // The scheduler stops reading: the crawler's big outcome fills the socket, and `next`'s
    // `working`, written behind it, cannot leave.
    peer.socket.pause();
    gates.finish('big', Buffer.alloc(48 * 1024 * 1024));
    await new Promise((resolve) => setImmediate(resolve));
    const count = peers.length;
    peer.ws.terminate();
    // The scheduler hands `next` back when the connection drops, so this crawler must not fetch it.
    await waitFor(() => peers.length > count && (peers[count]?.of('hello').length ?? 0) === 1, {
      timeoutMs: 5_000,
      message: 'reconnected',
    });
    assert.deepEqual(gates.started, ['big'], 'next was not started');
    const again = peers[count] as Peer;
    again.welcome();
    await waitFor(() => again.credit() === 1 + Math.max(2, Math.ceil(1 / 2)), {
      message: 'every slot asked for again on the new connection',
    });
  });

  test('a task still running when its connection ends has its signal aborted: its fetch stops', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 2);
    peer.tasks('running');
    await waitFor(() => gates.started.includes('running'), { message: 'running started' });
    const signal = gates.signals.get('running');
    assert.equal(signal?.aborted, false, 'not while its connection is open');
    const count = peers.length;
    peer.ws.terminate();
    await waitFor(() => signal?.aborted === true, { message: 'aborted once the connection ended' });
    await waitFor(() => peers.length > count && (peers[count]?.of('hello').length ?? 0) === 1, {
      timeoutMs: 5_000,
      message: 'reconnected',
    });
    const next = peers[count] as Peer;
    next.welcome();
    next.tasks('fresh');
    await waitFor(() => gates.started.includes('fresh'), { message: 'a task of the new connection started' });
    assert.equal(gates.signals.get('fresh')?.aborted, false, 'the new connection’s tasks get a live signal');
    gates.fail('running', new Error('aborted'));
    gates.finish('fresh');
  });

  test('many running tasks listen to their connection’s signal without a leak warning', async () => {
    const gates = new Gates();
    const { peer } = await connect(gates, 32);
    const ids = Array.from({ length: 32 }, (_, i) => `t${i}`);
    peer.tasks(...ids);
    await waitFor(() => ids.every((id) => gates.started.includes(id)), { message: 'all 32 started' });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      // As the fetcher does for each request, and a render for its slot wait and its page.
      const listeners = ids.flatMap((id) => {
        const signal = gates.signals.get(id) as AbortSignal;
        return [0, 1].map(() => {
          const listener = (): void => undefined;
          signal.addEventListener('abort', listener);
          return () => signal.removeEventListener('abort', listener);
        });
      });
      assert.equal(new Set(ids.map((id) => gates.signals.get(id))).size, 1, 'one signal per connection');
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      for (const remove of listeners) remove();
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.map((w) => w.name),
      [],
      'no MaxListenersExceededWarning',
    );
    for (const id of ids) gates.finish(id);
  });
});
