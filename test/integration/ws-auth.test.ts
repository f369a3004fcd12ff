import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchedulerClient } from '../../client/crawler/scheduler-client.js';
import { CrawlScheduler, type CrawlSchedulerSettings } from '../../scheduler/crawl-scheduler.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import { crawlRequestSchema } from '../../shared/protocol/crawl-api.js';
import { PRE_HELLO_MAX_BYTES, MAX_TEXT_MESSAGE_BYTES } from '../../shared/protocol/frame-limits.js';
import type { NewTask } from '../../shared/protocol/task.js';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { okOutcome, pageRecord, RawClient, tryUpgrade, type Refusal } from '../helpers/raw-crawler.js';
import { waitFor } from '../helpers/wait-for.js';
import { testJob } from '../helpers/test-job.js';

const TOKEN = 'auth-token-0123456789abcdef';
const SEEDS = 10;
const HELLO_TIMEOUT_MS = 600;
const MAX_CREDIT = 4;
const WAIT = { timeoutMs: 5_000 };
const PROXY_PASSWORD = 'pr0xy-s3cret';

function assertRefused(answer: Refusal | 'open' | 'error', status: number, code: string, what: string): void {
  assert.notEqual(answer, 'open', `${what}: the socket must not open`);
  assert.notEqual(answer, 'error', `${what}: an HTTP answer, not a dropped connection`);
  const refusal = answer as Refusal;
  assert.equal(refusal.status, status, what);
  assert.equal(refusal.body.error?.code, code, what);
  assert.ok((refusal.body.error?.message ?? '').length > 0, `${what}: a message`);
}

describe('crawler endpoint: authentication and limits', () => {
  let dir: string;
  let frontier: SqliteFrontier;
  let sink: FileSink;
  let scheduler: CrawlScheduler;
  let url: string;
  let ticks: number;
  const clients: RawClient[] = [];

  const connect = async (): Promise<RawClient> => {
    const client = await RawClient.connect(url, { token: TOKEN });
    clients.push(client);
    return client;
  };
  const ticksPass = async (n: number): Promise<void> => {
    const target = ticks + n;
    await waitFor(() => ticks >= target, { ...WAIT, message: `${n} scheduler ticks` });
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), `ws-auth-${randomUUID()}-`));
    frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
    sink = new FileSink({ dir });
    ticks = 0;
    const seeds: NewTask[] = Array.from({ length: SEEDS }, (_, i) => ({
      runId: 'default',
      url: `http://h${i}.test/`,
      host: `h${i}.test`,
      depth: 0,
      priority: 0,
      parentUrl: null,
    }));
    const settings: CrawlSchedulerSettings = {
      listenHost: '127.0.0.1',
      listenPort: 0,
      token: TOKEN,
      endpoint: { helloTimeoutMs: HELLO_TIMEOUT_MS, maxSessionCredit: MAX_CREDIT },
      leaseMs: 60_000,
      heartbeatMs: 10_000,
      bufferSize: 100,
      output: 'file:test',
      job: testJob(seeds.map((s) => s.url)),
    };
    scheduler = new CrawlScheduler({
      settings,
      frontier,
      sink,
      logger: silentLogger(),
      onProgress: () => (ticks += 1),
    });
    url = await scheduler.start();
    await waitFor(async () => (await frontier.stats()).leased === SEEDS, {
      ...WAIT,
      message: 'seeds buffered',
    });
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await scheduler.close();
    await sink.close();
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an upgrade without the right bearer token is refused with 401 before the socket opens', async () => {
    const cases: [string, Record<string, string>][] = [
      ['no Authorization header', {}],
      ['a wrong token', { authorization: `Bearer ${TOKEN}x` }],
      ['a token prefix', { authorization: `Bearer ${TOKEN.slice(0, -1)}` }],
      ['an empty bearer', { authorization: 'Bearer ' }],
      ['another scheme', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }],
    ];
    for (const [what, headers] of cases) {
      const answer = await tryUpgrade(url, { headers });
      assertRefused(answer, 401, 'UNAUTHORIZED', what);
      assert.match(String((answer as Refusal).headers['www-authenticate']), /^Bearer/);
    }
    assert.equal((await frontier.stats()).leased, SEEDS, 'no task left the buffer');
    // The right token opens it.
    assert.equal(await tryUpgrade(url, { token: TOKEN }), 'open');
  });

  test('a browser (Origin), a foreign Host or another path is refused before the socket opens', async () => {
    assertRefused(
      await tryUpgrade(url, { token: TOKEN, headers: { origin: 'http://evil.example' } }),
      403,
      'CROSS_ORIGIN',
      'a cross-origin page',
    );
    assertRefused(
      await tryUpgrade(url, { token: TOKEN, headers: { host: 'rebound.evil.example:8700' } }),
      403,
      'HOST_NOT_ALLOWED',
      'a DNS-rebinding name',
    );
    assertRefused(
      await tryUpgrade(url.replace('/crawlers', '/other'), { token: TOKEN }),
      404,
      'NOT_FOUND',
      'another path',
    );
  });

  test('a socket that never says hello gets nothing, not even a new crawl’s proxy password, and is closed', async () => {
    const crawler = await connect();
    await crawler.hello();
    const silent = await connect();
    await scheduler.submit(
      crawlRequestSchema.parse({
        seeds: ['http://h0.test/'],
        proxies: [`http://user:${PROXY_PASSWORD}@127.0.0.1:9/`],
      }),
    );
    // Protocol 4: a run's fetch settings go with its tasks, in a `run` message ahead of them.
    crawler.credit(SEEDS + 1);
    await waitFor(() => crawler.messages.some((m) => m.type === 'run' && m.fetch.proxies !== undefined), {
      ...WAIT,
      message: 'the crawler that said hello gets the run settings with its tasks',
    });
    assert.ok(crawler.received.includes(PROXY_PASSWORD), 'a crawler needs the proxy credentials');
    assert.equal(silent.closed, null, 'the silent socket was still open when the settings went out');

    const error = await silent.error(1, HELLO_TIMEOUT_MS + 5_000);
    assert.deepEqual({ code: error.code, fatal: error.fatal }, { code: 'HELLO_TIMEOUT', fatal: true });
    assert.equal((await silent.waitClosed()).code, 1008);
    assert.deepEqual(
      silent.messages.map((m) => m.type),
      ['error'],
      'nothing but the closing error reached it',
    );
    assert.ok(!silent.received.includes(PROXY_PASSWORD));
    assert.equal(crawler.open, true, 'the crawler that said hello stays');
  });

  test(`more than ${PRE_HELLO_MAX_BYTES} bytes before hello close the socket; the scheduler serves on`, async () => {
    const flood = await connect();
    flood.binary(Buffer.alloc(1024 * 1024, 0x41));
    const error = await flood.error(1);
    assert.deepEqual({ code: error.code, fatal: error.fatal }, { code: 'PRE_HELLO_LIMIT', fatal: true });
    assert.equal((await flood.waitClosed()).code, 1008);

    const crawler = await connect();
    await crawler.hello();
    crawler.credit(1);
    await waitFor(() => crawler.tasks().length === 1, {
      ...WAIT,
      message: 'a task for a well-behaved crawler',
    });
  });

  test(`credit is capped: asking for 10,000 again and again holds at most ${MAX_CREDIT} tasks`, async () => {
    const greedy = await connect();
    await greedy.hello();
    for (let i = 0; i < 3; i++) greedy.credit(10_000);
    await waitFor(() => greedy.tasks().length >= MAX_CREDIT, { ...WAIT, message: 'the capped tasks' });
    await ticksPass(2);
    await greedy.barrier();
    assert.equal(greedy.tasks().length, MAX_CREDIT, 'the rest of the buffer stays for other crawlers');

    // One answered: room for one more, however much is asked.
    const [first] = greedy.tasks();
    assert.ok(first);
    greedy.binary(encodeOutcomeFrame(okOutcome(first.taskId), pageRecord(first)));
    greedy.credit(10_000);
    await waitFor(() => greedy.tasks().length === MAX_CREDIT + 1, { ...WAIT, message: 'one more task' });
    await ticksPass(2);
    await greedy.barrier();
    assert.equal(greedy.tasks().length, MAX_CREDIT + 1);

    const other = await connect();
    await other.hello({ crawlerId: 'other' });
    other.credit(MAX_CREDIT);
    await waitFor(() => other.tasks().length === MAX_CREDIT, {
      ...WAIT,
      message: 'tasks for another crawler',
    });
  });

  test('bad JSON and oversized text messages get typed errors and the session carries on', async () => {
    const client = await connect();
    await client.hello();
    client.text('{"type": "credit", "n": ');
    assert.equal((await client.error(1)).code, 'BAD_FRAME');
    const padded = JSON.stringify({ type: 'heartbeat', t: 1, pad: 'x'.repeat(MAX_TEXT_MESSAGE_BYTES) });
    client.text(padded);
    const error = await client.error(2);
    assert.equal(error.code, 'BAD_FRAME');
    assert.equal(error.fatal, false);
    assert.match(error.message, /over \d+ bytes/);
    await client.barrier();
    assert.equal(client.open, true);
  });

  test('the crawler client sends its token on the upgrade, and a refused one stops instead of retrying', async () => {
    const fatal: string[] = [];
    const work = async (): Promise<Buffer> => Buffer.alloc(0);
    const wrong = new SchedulerClient({
      url,
      token: `${TOKEN}-wrong`,
      crawlerId: 'wrong-token',
      concurrency: 1,
      logger: silentLogger(),
      work,
      failed: () => Buffer.alloc(0),
      onFatal: (code) => fatal.push(code),
    });
    wrong.start();
    await waitFor(() => fatal.length > 0, { ...WAIT, message: 'the refusal reported as fatal' });
    assert.deepEqual(fatal, ['UNAUTHORIZED']);
    await wrong.close();

    const got: string[] = [];
    const right = new SchedulerClient({
      url,
      token: TOKEN,
      crawlerId: 'right-token',
      concurrency: 1,
      logger: silentLogger(),
      work: async (task) => {
        got.push(task.url);
        return encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task));
      },
      failed: () => Buffer.alloc(0),
      onFatal: (code) => fatal.push(code),
    });
    right.start();
    await waitFor(async () => (await frontier.stats()).done >= 1, { ...WAIT, message: 'a task done' });
    await right.close();
    assert.deepEqual(fatal, ['UNAUTHORIZED']);
  });
});
