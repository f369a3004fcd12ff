import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WebSocket } from 'ws';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import type { SchedulerMessage, WireTask } from '../../shared/protocol/messages.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';
import { waitFor } from '../helpers/wait-for.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';

const TOKEN = 'robots-token-0123456789abcdef';
const WAIT = { timeoutMs: 5_000 };

/** A hand-written crawler: it says hello, grants credit and records the tasks it is sent. */
class FakeCrawler {
  readonly tasks: WireTask[] = [];
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as SchedulerMessage;
      if (message.type === 'tasks') this.tasks.push(...message.items);
    });
  }

  static async join(url: string, credit: number): Promise<FakeCrawler> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise<void>((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const crawler = new FakeCrawler(ws);
    ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, crawlerId: 'fake' }));
    ws.send(JSON.stringify({ type: 'credit', n: credit }));
    return crawler;
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  async leave(): Promise<void> {
    const closed = new Promise((resolve) => this.ws.once('close', resolve));
    this.ws.terminate();
    await closed;
  }
}

let dir: string;
let frontier: SqliteFrontier;
let sink: FileSink;
let scheduler: CrawlScheduler;
let url: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), `robots-protocol-${randomUUID()}-`));
  frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
  sink = new FileSink({ dir });
  scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(
      testJob(['http://r.test/', 'http://r.test/private'], {
        scope: 'host',
        hostConcurrency: 4,
        respectRobots: true,
        userAgent: 'ackcrawl/0.1',
      }),
      TOKEN,
    ),
    frontier,
    sink,
    logger: silentLogger(),
  });
  url = await scheduler.start();
  await waitFor(async () => (await frontier.stats()).leased === 2, { ...WAIT, message: 'seeds buffered' });
});

after(async () => {
  await scheduler.close();
  await sink.close();
  await frontier.close();
  rmSync(dir, { recursive: true, force: true });
});

test('robots.txt goes out first, once; lost with its crawler it goes out again; its rules then apply', async () => {
  const first = await FakeCrawler.join(url, 10);
  await waitFor(() => first.tasks.length > 0, { ...WAIT, message: 'a task for the first crawler' });
  const second = await FakeCrawler.join(url, 10);
  // Both crawlers have credit; give the scheduler time to hand out anything it would.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(
    first.tasks.map((t) => [t.kind, t.url]),
    [['robots', 'http://r.test/robots.txt']],
  );
  assert.equal(second.tasks.length, 0, 'one robots fetch for the host; its pages wait');
  assert.equal(scheduler.explainRobots('http://r.test/private').state, 'fetching');
  const waiting = await scheduler.why('http://r.test/');
  assert.equal(waiting.robots?.state, 'fetching', 'why? names the robots.txt wait');

  await first.leave();
  await waitFor(() => second.tasks.length === 1, { ...WAIT, message: 'the robots fetch sent again' });
  const again = second.tasks[0] as WireTask;
  assert.equal(again.kind, 'robots');
  assert.notEqual(again.taskId, first.tasks[0]?.taskId);

  second.send({
    type: 'robots',
    taskId: again.taskId,
    status: 200,
    body: 'User-agent: *\nDisallow: /private\n',
    failure: null,
  });
  await waitFor(() => second.tasks.length === 2, { ...WAIT, message: 'the allowed page' });
  assert.equal(second.tasks[1]?.url, 'http://r.test/');
  assert.equal(second.tasks[1]?.kind, undefined);
  await waitFor(async () => (await frontier.stats()).failed === 1, { ...WAIT, message: 'denied settled' });
  await sink.close();
  const path = join(dir, 'pages-000001.jsonl');
  assert.ok(existsSync(path));
  const records = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PageRecord);
  assert.deepEqual(
    records.map((r) => [r.url, r.error?.code, r.error?.message]),
    [['http://r.test/private', 'ROBOTS_DENIED', 'Disallow: /private (robots.txt line 2)']],
  );
  assert.ok(!second.tasks.some((t) => t.url === 'http://r.test/private'), 'never sent to a crawler');
  assert.deepEqual(scheduler.explainRobots('http://r.test/private'), {
    state: 'disallowed',
    line: 2,
    rule: 'Disallow: /private',
  });
  const why = await scheduler.why('http://r.test/private');
  assert.equal(why.state, 'robots-denied');
  assert.match(why.reason, /robots\.txt/);
  assert.deepEqual(why.robots, { state: 'disallowed', line: 2, rule: 'Disallow: /private', until: null });
  await second.leave();
});
