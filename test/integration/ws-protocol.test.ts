import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import { crawlRequestSchema } from '../../shared/protocol/crawl-api.js';
import { DEFAULT_MAX_LINKS_PER_PAGE, DEFAULT_MAX_URL_LENGTH } from '../../shared/protocol/link-limits.js';
import type { OutcomeHeader, SchedulerMessage, WireTask } from '../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import type { NewTask } from '../../shared/protocol/task.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import { okOutcome, pageRecord, RawClient } from '../helpers/raw-crawler.js';
import { waitFor } from '../helpers/wait-for.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';

const TOKEN = 'test-token-0123456789abcdef';
const SEEDS = 10;
const WAIT = { timeoutMs: 5_000 };

describe('scheduler WebSocket protocol', () => {
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
  /** Page records in the sink's output. */
  const sinkRecords = (): PageRecord[] => {
    const path = join(dir, 'pages-000001.jsonl');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as PageRecord);
  };
  const sinkUrls = (): string[] => sinkRecords().map((r) => r.url);
  /** Waits for `n` more scheduler ticks, each of which hands out whatever credit allows. */
  const ticksPass = async (n: number): Promise<void> => {
    const target = ticks + n;
    await waitFor(() => ticks >= target, { ...WAIT, message: `${n} scheduler ticks` });
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), `ws-protocol-${randomUUID()}-`));
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
    // These hand-written crawlers answer page tasks only; robots tasks have their own tests.
    const settings = testSchedulerSettings(testJob(seeds.map((s) => s.url)), TOKEN, {
      drainTimeoutMs: 1_000,
    });
    scheduler = new CrawlScheduler({
      settings,
      frontier,
      sink,
      logger: silentLogger(),
      onProgress: () => (ticks += 1),
    });
    url = await scheduler.start();
    // Every seed leased into the dispatcher's buffer, ready to go out as soon as credit allows.
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

  test('bad messages get a typed, non-fatal error and the session carries on', async () => {
    const client = await connect();
    client.credit(5);
    assert.deepEqual(
      { ...(await client.error(1)), message: '' },
      { type: 'error', code: 'NOT_READY', message: '', fatal: false },
    );
    client.binary(encodeOutcomeFrame(okOutcome('1'), Buffer.from('{}')));
    assert.equal((await client.error(2)).code, 'NOT_READY');
    // A hello whose concurrency is no count of requests is refused; the session still waits for one.
    client.json({ type: 'hello', protocol: PROTOCOL_VERSION, crawlerId: 'x', concurrency: 0 });
    assert.equal((await client.error(3)).code, 'BAD_FRAME');

    await client.hello();
    const welcome = client.messages.find((m) => m.type === 'welcome');
    assert.equal(welcome?.type === 'welcome' && welcome.protocol, PROTOCOL_VERSION);
    assert.equal(welcome?.type === 'welcome' && welcome.fetch.userAgent, 'ackcrawl-test');

    const bad: [string, () => void][] = [
      ['BAD_FRAME', () => client.text('this is not json')],
      ['BAD_FRAME', () => client.json({ type: 'dance' })],
      ['BAD_FRAME', () => client.json({ type: 'credit', n: 0 })],
      ['BAD_FRAME', () => client.binary(Buffer.from([0, 0, 0, 9, 1, 2]))],
      ['BAD_FRAME', () => client.binary(encodeOutcomeFrame(okOutcome('1'), Buffer.from('not json')))],
      ['DUPLICATE_HELLO', () => client.json({ type: 'hello', protocol: PROTOCOL_VERSION, crawlerId: 'x' })],
    ];
    for (const [i, [code, send]] of bad.entries()) {
      send();
      const error = await client.error(4 + i);
      assert.equal(error.code, code, `bad message #${i}`);
      assert.equal(error.fatal, false);
      assert.ok(error.message.length > 0);
    }
    assert.equal(client.open, true);
    assert.equal(client.tasks().length, 0, 'the credit sent before hello was not counted');

    client.credit(1);
    await waitFor(() => client.tasks().length === 1, { ...WAIT, message: 'a task after valid credit' });
    await client.barrier();
    assert.equal(client.errors().length, 3 + bad.length, 'no further errors');
  });

  test('a hello with another protocol version is refused fatally and the socket closes', async () => {
    const client = await connect();
    client.json({ type: 'hello', protocol: PROTOCOL_VERSION + 1, crawlerId: 'future' });
    const error = await client.error(1);
    assert.equal(error.code, 'PROTOCOL_VERSION');
    assert.equal(error.fatal, true);
    const closed = await client.waitClosed();
    assert.equal(closed.code, 1008);
    assert.equal(
      client.messages.some((m) => m.type === 'welcome'),
      false,
    );
  });

  test('credit is never exceeded', async () => {
    const client = await connect();
    await client.hello();
    client.credit(2);
    await waitFor(() => client.tasks().length >= 2, { ...WAIT, message: 'two tasks' });
    // Every tick pumps the buffer: two of them give any extra task every chance to go out.
    await ticksPass(2);
    await client.barrier();
    assert.equal(client.tasks().length, 2);

    client.credit(1);
    await waitFor(() => client.tasks().length >= 3, { ...WAIT, message: 'a third task' });
    await ticksPass(2);
    await client.barrier();
    assert.equal(client.tasks().length, 3);
    assert.equal(new Set(client.tasks().map((t) => t.taskId)).size, 3, 'three different tasks');
    for (const task of client.tasks()) assert.equal(task.attempt, 1);
  });

  test('an ok outcome: the record reaches the sink file and the frontier marks the task done', async () => {
    const client = await connect();
    await client.hello();
    client.credit(1);
    await waitFor(() => client.tasks().length === 1, { ...WAIT, message: 'a task' });
    const [task] = client.tasks();
    assert.ok(task);

    const link = `${task.url}child`;
    client.binary(encodeOutcomeFrame(okOutcome(task.taskId, [link]), pageRecord(task)));
    await waitFor(async () => (await frontier.stats()).done === 1, { ...WAIT, message: 'task done' });
    assert.deepEqual(sinkUrls(), [task.url]);
    const stats = await frontier.stats();
    assert.equal(stats.total, SEEDS + 1, 'the discovered link was accepted');
    assert.notEqual(await frontier.checkpoint(), null, 'the sink checkpoint was stored with the settle');
  });

  test('failures follow the retry policy: retriable goes back out, final is recorded as failed', async () => {
    const client = await connect();
    await client.hello();
    client.credit(2);
    await waitFor(() => client.tasks().length === 2, { ...WAIT, message: 'two tasks' });
    const [flaky, gone] = client.tasks();
    assert.ok(flaky && gone);

    const failed = (taskId: string, code: string, retriable: boolean): OutcomeHeader => ({
      type: 'outcome',
      taskId,
      outcome: 'failed',
      failure: { code, message: code, retriable, status: null, retryAfterMs: null },
      links: [],
    });
    client.binary(encodeOutcomeFrame(failed(flaky.taskId, 'CONNECTION_RESET', true), pageRecord(flaky)));
    client.binary(encodeOutcomeFrame(failed(gone.taskId, 'HTTP_404', false), pageRecord(gone)));
    await waitFor(async () => (await frontier.stats()).failed === 1, { ...WAIT, message: 'final failure' });
    assert.deepEqual(sinkUrls(), [gone.url], 'only the final failure has a record');

    // The first retry is at once: with credit, the same task comes back as attempt 2.
    client.credit(SEEDS);
    await waitFor(() => client.tasks().some((t) => t.taskId === flaky.taskId && t.attempt === 2), {
      ...WAIT,
      message: 'the retriable task again, as attempt 2',
    });
  });

  test('an outcome for an unknown task id is ignored: no record, nothing settled', async () => {
    const client = await connect();
    await client.hello();
    client.credit(2);
    await waitFor(() => client.tasks().length === 2, { ...WAIT, message: 'two tasks' });
    const [task, later] = client.tasks();
    assert.ok(task && later);

    const bogus: WireTask = { ...task, taskId: '999999', url: 'http://bogus.test/' };
    client.binary(encodeOutcomeFrame(okOutcome(bogus.taskId), pageRecord(bogus)));
    client.binary(
      encodeOutcomeFrame(okOutcome('no-such-task'), pageRecord({ ...bogus, url: 'http://bogus2.test/' })),
    );
    client.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task)));
    await waitFor(async () => (await frontier.stats()).done === 1, {
      ...WAIT,
      message: 'the real task done',
    });
    assert.deepEqual(sinkUrls(), [task.url]);
    assert.equal(client.errors().length, 0, 'a stale outcome is not a protocol error');

    // The same outcome again (a duplicate after the task was settled) is ignored too. Outcomes are
    // handled in order, so once the next real one is settled, the duplicate has had its chance.
    client.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task, { body: 'duplicate' })));
    client.binary(encodeOutcomeFrame(okOutcome(later.taskId), pageRecord(later)));
    await waitFor(async () => (await frontier.stats()).done === 2, {
      ...WAIT,
      message: 'the later task done',
    });
    assert.deepEqual(sinkUrls(), [task.url, later.url]);
  });

  test('an outcome for a task sent to another crawler is ignored', async () => {
    const owner = await connect();
    await owner.hello({ crawlerId: 'owner' });
    owner.credit(1);
    await waitFor(() => owner.tasks().length === 1, { ...WAIT, message: 'a task for the owner' });
    const [task] = owner.tasks();
    assert.ok(task);

    const thief = await connect();
    await thief.hello({ crawlerId: 'thief' });
    thief.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task, { body: 'forged' })));
    await thief.barrier();
    owner.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task)));
    await waitFor(async () => (await frontier.stats()).done === 1, {
      ...WAIT,
      message: 'the owner’s outcome',
    });
    const lines = readFileSync(join(dir, 'pages-000001.jsonl'), 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0] as string) as PageRecord).body, '<p>hi</p>');
  });

  test('a crawler that goes away with tasks in flight: they are handed to another crawler', async () => {
    const leaving = await connect();
    await leaving.hello({ crawlerId: 'leaving' });
    leaving.credit(2);
    await waitFor(() => leaving.tasks().length === 2, {
      ...WAIT,
      message: 'two tasks for the leaving crawler',
    });
    const inFlight = leaving.tasks().map((t) => t.url);

    const staying = await connect();
    await staying.hello({ crawlerId: 'staying' });
    staying.credit(SEEDS);
    await waitFor(() => staying.tasks().length === SEEDS - 2, { ...WAIT, message: 'the other tasks' });
    for (const u of inFlight) assert.ok(!staying.tasks().some((t) => t.url === u), `${u} is still in flight`);

    await leaving.close();
    await waitFor(() => staying.tasks().length === SEEDS, { ...WAIT, message: 'the handed-back tasks' });
    const handed = staying.tasks().slice(SEEDS - 2);
    assert.deepEqual(handed.map((t) => t.url).sort(), [...inFlight].sort());
    for (const task of handed) assert.equal(task.attempt, 1, 'a handed-back task costs no attempt');
  });

  test('too many bad frames close the session', async () => {
    const client = await connect();
    await client.hello();
    const limit = 100; // WsSession's default maxBadFrames
    for (let i = 0; i < limit; i++) client.text(`garbage ${i}`);
    await client.error(limit);
    await client.barrier();
    assert.equal(client.open, true, 'still open at the limit');
    assert.ok(client.errors().every((e) => !e.fatal));

    client.text('one too many');
    const last = await client.error(limit + 1);
    assert.equal(last.code, 'TOO_MANY_BAD_FRAMES');
    assert.equal(last.fatal, true);
    assert.equal((await client.waitClosed()).code, 1008);
  });

  test('a submitted crawl sends its settings, link limits included, to crawlers with its tasks', async () => {
    const client = await connect();
    await client.hello();
    // Protocol 4: a run's fetch settings reach a crawler in a `run` message ahead of its tasks.
    const runMessages = (): Extract<SchedulerMessage, { type: 'run' }>[] =>
      client.messages.filter((m): m is Extract<SchedulerMessage, { type: 'run' }> => m.type === 'run');
    await scheduler.submit(
      crawlRequestSchema.parse({ seeds: ['http://n1.test/'], maxUrlLength: 300, maxLinksPerPage: 7 }),
    );
    client.credit(SEEDS + 1);
    await waitFor(() => client.tasks().some((t) => t.url === 'http://n1.test/'), {
      ...WAIT,
      message: 'the new seed',
    });
    const first = runMessages().at(-1);
    assert.equal(first?.fetch.maxUrlLength, 300);
    assert.equal(first?.fetch.maxLinksPerPage, 7);
    const firstIndex = client.messages.indexOf(first as SchedulerMessage);
    const taskIndex = client.messages.findIndex((m) => m.type === 'tasks');
    assert.ok(firstIndex < taskIndex || taskIndex === -1, 'the settings come before the tasks');
    // A request that leaves them out gets the scheduler's configured ones (here the defaults).
    const before = runMessages().length;
    await scheduler.submit(crawlRequestSchema.parse({ seeds: ['http://n2.test/'] }));
    client.credit(1);
    await waitFor(() => runMessages().length > before, { ...WAIT, message: 'a second run message' });
    assert.equal(runMessages().at(-1)?.fetch.maxUrlLength, DEFAULT_MAX_URL_LENGTH);
    assert.equal(runMessages().at(-1)?.fetch.maxLinksPerPage, DEFAULT_MAX_LINKS_PER_PAGE);
  });

  /** A crawler that takes everything, says it works on `taskId`, and is killed; returns that task. */
  const crawlerDiesOn = async (taskId: string | null, attempt: number): Promise<WireTask> => {
    const client = await connect();
    await client.hello();
    client.credit(SEEDS + 1);
    await waitFor(
      () => client.tasks().some((t) => (taskId === null || t.taskId === taskId) && t.attempt === attempt),
      {
        ...WAIT,
        message: `the task, attempt ${attempt}`,
      },
    );
    const task = client
      .tasks()
      .find((t) => (taskId === null || t.taskId === taskId) && t.attempt === attempt);
    assert.ok(task);
    client.json({ type: 'working', taskIds: [task.taskId] });
    await client.barrier();
    await client.kill();
    return task;
  };

  test('a task worked on by crawlers that die without a goodbye: back twice, then an attempt, then CRAWLER_CRASHED', async () => {
    const first = await crawlerDiesOn(null, 1);
    const second = await crawlerDiesOn(first.taskId, 1);
    assert.equal(second.lastErrorCode, undefined, 'the first crash only put it back');
    const third = await crawlerDiesOn(first.taskId, 1);
    assert.equal(third.lastErrorCode, undefined, 'the second crash only put it back');
    const fourth = await crawlerDiesOn(first.taskId, 2);
    assert.equal(fourth.lastErrorCode, 'CRAWLER_CRASHED', 'the third crash cost an attempt');
    await waitFor(async () => (await frontier.stats()).failed === 1, { ...WAIT, message: 'final failure' });
    const records = sinkRecords();
    assert.equal(records.length, 1);
    assert.equal(records[0]?.url, first.url);
    assert.equal(records[0]?.error?.code, 'CRAWLER_CRASHED');
    assert.equal(records[0]?.outcome, 'failed');
    assert.equal(records[0]?.attempt, 2);

    // The tasks the dead crawlers only held (never said they worked on) lost nothing.
    const survivor = await connect();
    await survivor.hello();
    survivor.credit(SEEDS);
    await waitFor(() => survivor.tasks().length === SEEDS - 1, { ...WAIT, message: 'every other task' });
    assert.ok(survivor.tasks().every((t) => t.attempt === 1 && t.taskId !== first.taskId));
  });

  test('a crawler that says bye, or never said it worked on a task, costs the task nothing', async () => {
    let taskId: string | null = null;
    for (let round = 0; round < 3; round++) {
      const client = await connect();
      await client.hello();
      client.credit(SEEDS);
      await waitFor(() => client.tasks().length === SEEDS, { ...WAIT, message: 'every task' });
      const task = client.tasks().find((t) => taskId === null || t.taskId === taskId);
      assert.ok(task);
      taskId = task.taskId;
      assert.equal(task.attempt, 1, `round ${round}`);
      client.json({ type: 'working', taskIds: [task.taskId] });
      client.json({ type: 'bye' });
      assert.equal((await client.waitClosed()).reason, 'bye');
    }
    for (let round = 0; round < 3; round++) {
      const client = await connect();
      await client.hello();
      client.credit(SEEDS);
      await waitFor(() => client.tasks().length === SEEDS, { ...WAIT, message: 'every task' });
      assert.ok(
        client.tasks().every((t) => t.attempt === 1),
        `killed round ${round}`,
      );
      await client.kill();
    }
    assert.equal((await frontier.stats()).failed, 0);
  });

  test('released tasks go to another crawler at once, attempt 1; a late outcome from the releaser is stale', async () => {
    const leaving = await connect();
    await leaving.hello({ crawlerId: 'leaving' });
    leaving.credit(2);
    await waitFor(() => leaving.tasks().length === 2, { ...WAIT, message: 'two tasks' });
    const released = leaving.tasks();
    const staying = await connect();
    await staying.hello({ crawlerId: 'staying' });
    staying.credit(SEEDS);
    await waitFor(() => staying.tasks().length === SEEDS - 2, { ...WAIT, message: 'the other tasks' });

    leaving.json({ type: 'release', taskIds: released.map((t) => t.taskId) });
    await waitFor(() => staying.tasks().length === SEEDS, { ...WAIT, message: 'the released tasks' });
    const handed = staying.tasks().slice(SEEDS - 2);
    assert.deepEqual(handed.map((t) => t.taskId).sort(), released.map((t) => t.taskId).sort());
    assert.ok(handed.every((t) => t.attempt === 1));

    const [late] = released;
    assert.ok(late);
    leaving.binary(encodeOutcomeFrame(okOutcome(late.taskId), pageRecord(late, { body: 'late' })));
    await leaving.barrier();
    staying.binary(encodeOutcomeFrame(okOutcome(late.taskId), pageRecord(late)));
    await waitFor(async () => (await frontier.stats()).done === 1, { ...WAIT, message: 'one done' });
    assert.deepEqual(
      sinkRecords().map((r) => r.body),
      ['<p>hi</p>'],
      'only the new holder’s outcome was taken',
    );
  });

  test('a graceful stop asks crawlers to drain and takes the outcomes they deliver before closing', async () => {
    const client = await connect();
    await client.hello();
    client.credit(3);
    await waitFor(() => client.tasks().length === 3, { ...WAIT, message: 'three tasks' });
    const [done, handedBack, unanswered] = client.tasks();
    assert.ok(done && handedBack && unanswered);
    client.json({ type: 'working', taskIds: [done.taskId, unanswered.taskId] });
    const closing = scheduler.close();
    await waitFor(() => client.messages.some((m) => m.type === 'drain'), { ...WAIT, message: 'drain' });
    client.json({ type: 'release', taskIds: [handedBack.taskId] });
    client.binary(encodeOutcomeFrame(okOutcome(done.taskId), pageRecord(done)));
    // `unanswered` is still running when the drain deadline (1 s here) passes.
    await closing;
    assert.equal((await client.waitClosed()).code, 1001, 'closed by the scheduler, after the drain');
    assert.deepEqual(sinkUrls(), [done.url], 'the delivered outcome is durable');
    const stats = await frontier.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.leased, 0, 'the released and the unanswered tasks went back to the frontier');
    assert.equal(stats.ready, SEEDS - 1);
  });
});
