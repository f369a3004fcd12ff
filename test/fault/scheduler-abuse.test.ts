import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { okOutcome, pageRecord, RawClient, tryUpgrade, type Refusal } from '../helpers/raw-crawler.js';
import {
  establishedTo,
  httpCall,
  startSchedulerProcess,
  type SchedulerProcess,
} from '../helpers/scheduler-process.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'abuse-token-0123456789abcdef';
const PER_ADDRESS = 50;
const TOTAL = 120;
const HELLO_TIMEOUT_MS = 4_000;
const MiB = 1024 * 1024;
const SEEDS = Array.from({ length: 40 }, (_, i) => `http://h${i}.test/`);

/**
 * The scheduler as its own process, attacked the ways issue 8 lists: no credentials, wrong ones,
 * a 50 MiB frame before hello, a thousand connections, bad JSON, browser requests. Each time it
 * must refuse with a typed error, keep its memory, stay up, and go on serving a real crawler.
 */
describe('scheduler under WebSocket and HTTP abuse (real process)', () => {
  let scheduler: SchedulerProcess;

  /** A well-behaved crawler (from `localAddress`) takes one task and delivers its record. */
  const crawlOne = async (localAddress: string): Promise<void> => {
    const crawler = await RawClient.connect(scheduler.url, { token: TOKEN, localAddress });
    try {
      await crawler.hello({ crawlerId: `good-${localAddress}` });
      crawler.credit(1);
      await waitFor(() => crawler.tasks().length === 1, { timeoutMs: 10_000, message: 'a task' });
      const [task] = crawler.tasks();
      assert.ok(task);
      crawler.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task)));
      const records = join(scheduler.outDir, 'pages-000001.jsonl');
      await waitFor(
        () => existsSync(records) && readFileSync(records, 'utf8').includes(`"url":"${task.url}"`),
        {
          timeoutMs: 10_000,
          message: `the record of ${task.url} written`,
        },
      );
    } finally {
      await crawler.close();
    }
  };

  before(async () => {
    scheduler = await startSchedulerProcess({
      ACKCRAWL_TOKEN: TOKEN,
      ACKCRAWL_SEEDS: SEEDS.join(' '),
      ACKCRAWL_RESPECT_ROBOTS: 'false',
      ACKCRAWL_HOST_DELAY_MS: '0',
      ACKCRAWL_HELLO_TIMEOUT_MS: String(HELLO_TIMEOUT_MS),
      ACKCRAWL_HEADERS_TIMEOUT_MS: '4000',
      ACKCRAWL_MAX_CONNECTIONS: String(TOTAL),
      ACKCRAWL_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    });
  });

  after(async () => {
    assert.ok(!scheduler.stderr().includes(TOKEN), 'the token never appears in the log');
    await scheduler.stop();
  });

  test('no or wrong credentials: 401 at the upgrade, typed', async () => {
    for (const token of [undefined, 'wrong-token-0123456789abcdef']) {
      const answer = await tryUpgrade(scheduler.url, token === undefined ? {} : { token });
      assert.notEqual(answer, 'open');
      assert.equal((answer as Refusal).status, 401);
      assert.equal((answer as Refusal).body.error?.code, 'UNAUTHORIZED');
    }
  });

  test('a 50 MiB frame before hello is cut off without the scheduler’s memory jumping; it serves on', async () => {
    const before = scheduler.peakRss();
    const attacker = await RawClient.connect(scheduler.url, { token: TOKEN });
    attacker.binary(Buffer.alloc(50 * MiB, 0x61), () => {});
    const error = await attacker.error(1, 10_000);
    assert.equal(error.code, 'PRE_HELLO_LIMIT');
    assert.equal(error.fatal, true);
    await attacker.waitClosed(10_000);
    const grew = scheduler.peakRss() - before;
    console.log(`a 50 MiB frame before hello: the scheduler's peak RSS grew ${(grew / MiB).toFixed(1)} MiB`);
    assert.ok(grew < 16 * MiB, `peak RSS grew by ${(grew / MiB).toFixed(1)} MiB`);
    assert.ok(scheduler.alive());
    await crawlOne('127.0.0.1');
  });

  test('bad JSON frames get typed errors, before and after hello', async () => {
    const client = await RawClient.connect(scheduler.url, { token: TOKEN });
    client.text('{"type":');
    assert.deepEqual(
      { code: (await client.error(1)).code, fatal: client.errors()[0]?.fatal },
      { code: 'BAD_FRAME', fatal: false },
    );
    client.json({ type: 'credit', n: 5 });
    assert.equal((await client.error(2)).code, 'NOT_READY');
    await client.hello();
    client.text('\u0000\u0001 not json');
    client.json({ type: 'credit', n: -1 });
    client.binary(Buffer.from([0, 0, 0, 200, 1]));
    assert.equal((await client.error(5)).code, 'BAD_FRAME');
    assert.ok(client.errors().every((e) => !e.fatal && e.message.length > 0));
    await client.barrier();
    await client.close();
  });

  test('1,000 connection attempts: the caps hold, the scheduler stays up, a crawler still works', async () => {
    let open = 0;
    let mostOpen = 0;
    let heldAtOnce = 0;
    const refusals = new Map<number, number>();
    const untyped: string[] = [];
    const sockets: Socket[] = [];
    const count = (status: number): void => void refusals.set(status, (refusals.get(status) ?? 0) + 1);

    /** A request head sent a byte at a time (slowloris): held until the headers timeout. */
    const slowloris = async (): Promise<void> => {
      const socket = tcpConnect({ host: '127.0.0.1', port: scheduler.port });
      sockets.push(socket);
      socket.on('error', () => {});
      socket.setEncoding('utf8');
      let answer = '';
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      const drip = setInterval(() => socket.writable && socket.write('a'), 300);
      await new Promise((resolve) => socket.once('close', resolve));
      clearInterval(drip);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      count(status);
      const code = status === 429 ? 'TOO_MANY_CONNECTIONS_FROM_ADDRESS' : 'REQUEST_TIMEOUT';
      if (!answer.includes(`"code":"${code}"`)) untyped.push(answer);
    };
    /** A crawler socket that never says hello (held until the hello timeout), or one without a token. */
    const upgrade = async (token: string | undefined): Promise<void> => {
      try {
        const client = await RawClient.connect(scheduler.url, token === undefined ? {} : { token });
        open += 1;
        mostOpen = Math.max(mostOpen, open);
        await client.waitClosed(HELLO_TIMEOUT_MS + 10_000);
        open -= 1;
        assert.equal(client.errors()[0]?.code, 'HELLO_TIMEOUT');
      } catch (err) {
        count(Number(/Unexpected server response: (\d+)/.exec(String(err))?.[1] ?? 0));
      }
    };

    try {
      // 20 without a token while there is room: 401 each.
      await Promise.all(Array.from({ length: 20 }, () => upgrade(undefined)));
      // 480 that hold what they get (slow heads first, then silent crawler sockets): the address's
      // connections fill up at once, the rest are refused.
      const holders = Array.from({ length: 20 }, () => slowloris());
      await waitFor(() => establishedTo(scheduler.port) >= 20, {
        timeoutMs: 10_000,
        message: 'slow heads in',
      });
      holders.push(
        ...Array.from({ length: 280 }, () => upgrade(TOKEN)),
        ...Array.from({ length: 180 }, () => slowloris()),
      );
      await waitFor(() => establishedTo(scheduler.port) >= PER_ADDRESS, {
        timeoutMs: 10_000,
        message: 'the address full',
      });
      // 500 more while it is full, with and without the token: refused at once.
      await Promise.all(Array.from({ length: 500 }, (_, i) => upgrade(i % 2 === 0 ? TOKEN : undefined)));
      // What is left open is what the scheduler holds: the cap (refused sockets close at once).
      heldAtOnce = establishedTo(scheduler.port);
      const fromFlood = await tryUpgrade(scheduler.url, { token: TOKEN });
      assert.notEqual(fromFlood, 'open', 'the flooding address is full');
      assert.equal((fromFlood as Refusal).status, 429);
      assert.equal((fromFlood as Refusal).body.error?.code, 'TOO_MANY_CONNECTIONS_FROM_ADDRESS');
      assert.equal((fromFlood as Refusal).headers['retry-after'], '5', 'told when to come back');
      // Meanwhile a crawler on another address works, and the API answers there.
      const health = await httpCall(scheduler.port, 'GET', '/health', { localAddress: '127.0.0.2' });
      assert.equal(health.status, 200);
      await crawlOne('127.0.0.2');
      await Promise.all(holders);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    console.log(
      `refusals by status: ${JSON.stringify(Object.fromEntries(refusals))}; ` +
        `crawler sockets open at once ${mostOpen}; connections held after the flood ${heldAtOnce}`,
    );
    assert.ok(mostOpen <= PER_ADDRESS, `${mostOpen} sockets open at once from one address`);
    assert.ok(heldAtOnce <= PER_ADDRESS, `${heldAtOnce} connections held from one address`);
    assert.ok((refusals.get(429) ?? 0) >= 900, 'the flood beyond the cap was refused at once');
    assert.equal(refusals.get(401), 20, 'no token: 401');
    assert.ok((refusals.get(408) ?? 0) >= 20, 'slow heads admitted under the cap end with 408');
    assert.deepEqual(untyped, [], 'every refusal is a typed JSON error');
    assert.deepEqual(
      [...refusals.keys()].filter((status) => ![401, 408, 429].includes(status)),
      [],
      'refused with 401 (no token), 408 (slow head) or 429 (over the cap), never just dropped',
    );
    assert.ok(scheduler.alive(), 'the scheduler is up');
    assert.ok(scheduler.peakRss() < 400 * MiB, `peak RSS ${(scheduler.peakRss() / MiB).toFixed(0)} MiB`);
    // The flood gone, its address gets in again.
    await waitFor(() => establishedTo(scheduler.port) === 0, {
      timeoutMs: 10_000,
      message: 'the flood closed',
    });
    await crawlOne('127.0.0.1');
  });

  test(`the total cap: beyond ${TOTAL} connections from many addresses, 503 with Retry-After`, async () => {
    const held: RawClient[] = [];
    const refused: string[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const localAddress = `127.0.0.${10 + (i % 5)}`;
        try {
          held.push(await RawClient.connect(scheduler.url, { token: TOKEN, localAddress }));
        } catch (err) {
          refused.push(String(err));
        }
      }),
    );
    assert.ok(held.length <= TOTAL, `${held.length} opened`);
    assert.ok(refused.length >= 200 - TOTAL, `${refused.length} refused`);
    assert.ok(
      refused.every((e) => e.includes('Unexpected server response: 503')),
      refused[0],
    );
    const another = await tryUpgrade(scheduler.url, { token: TOKEN, localAddress: '127.0.0.20' });
    assert.notEqual(another, 'open');
    assert.equal((another as Refusal).status, 503);
    assert.equal((another as Refusal).body.error?.code, 'TOO_MANY_CONNECTIONS');
    assert.equal((another as Refusal).headers['retry-after'], '5');
    for (const client of held) client.terminate();
    await waitFor(() => establishedTo(scheduler.port) === 0, { timeoutMs: 10_000, message: 'all closed' });
    await crawlOne('127.0.0.3');
    assert.ok(scheduler.alive());
  });

  /** Writes `head`, then `bodyBytes` of body as fast as the socket takes them; resolves with the answer. */
  const rawRequest = (head: string, bodyBytes = 0): Promise<string> =>
    new Promise((resolve) => {
      const socket = tcpConnect({ host: '127.0.0.1', port: scheduler.port });
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('error', () => {});
      socket.on('close', () => resolve(answer));
      socket.write(head);
      const chunk = Buffer.alloc(256 * 1024, 0x7b);
      let sent = 0;
      const pump = (): void => {
        while (sent < bodyBytes && socket.writable) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });

  test('HTTP before authentication: only the head is read, and every refusal is JSON', async () => {
    const before = scheduler.peakRss();
    const big = await rawRequest(
      `POST /crawl HTTP/1.1\r\nHost: 127.0.0.1:${scheduler.port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${50 * MiB}\r\n\r\n`,
      50 * MiB,
    );
    assert.match(big, /^HTTP\/1\.1 401 /);
    assert.match(big, /"code":"UNAUTHORIZED"/);
    const grew = scheduler.peakRss() - before;
    console.log(
      `a 50 MiB body without a token: the scheduler's peak RSS grew ${(grew / MiB).toFixed(1)} MiB`,
    );
    assert.ok(
      grew < 16 * MiB,
      `a 50 MiB body without a token: peak RSS grew by ${(grew / MiB).toFixed(1)} MiB`,
    );
    const noHost = await rawRequest('GET /health HTTP/1.1\r\n\r\n');
    assert.match(noHost, /^HTTP\/1\.1 403 [^]*"code":"HOST_NOT_ALLOWED"/);
    const hugeHead = await rawRequest(
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    assert.match(hugeHead, /^HTTP\/1\.1 431 [^]*"code":"HEADERS_TOO_LARGE"/);
    const garbage = await rawRequest('\u0000\u0001 not http\r\n\r\n');
    assert.match(garbage, /^HTTP\/1\.1 400 [^]*"code":"BAD_REQUEST"/);
    assert.ok(scheduler.alive());
  });

  test('HTTP: a cross-origin POST, a rebinding Host, a form POST, no token — all refused, typed', async () => {
    const post = (headers: Record<string, string>) =>
      httpCall(scheduler.port, 'POST', '/crawl', {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
        body: JSON.stringify({ seeds: ['http://127.0.0.1:1/'], allowPrivate: true }),
      });
    const cases: [Record<string, string>, number, string][] = [
      [{ origin: 'http://evil.example' }, 403, 'CROSS_ORIGIN'],
      [{ host: `rebind.evil.example:${scheduler.port}` }, 403, 'HOST_NOT_ALLOWED'],
      [{ 'content-type': 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [{ authorization: '' }, 401, 'UNAUTHORIZED'],
    ];
    for (const [headers, status, code] of cases) {
      const answer = await post(headers);
      assert.equal(answer.status, status, `${JSON.stringify(headers)}: ${answer.text}`);
      assert.equal((JSON.parse(answer.text) as { error: { code: string } }).error.code, code);
    }
    const status = await httpCall(scheduler.port, 'GET', '/crawl', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(status.status, 200);
    assert.ok(!existsSync(join(scheduler.outDir, 'job.json')), 'no refused crawl was saved');
  });
});
