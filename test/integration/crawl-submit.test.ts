import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import { silentLogger } from '../../shared/logger.js';
import { crawlRequestSchema } from '../../shared/protocol/crawl-api.js';
import type { SchedulerMessage } from '../../shared/protocol/messages.js';
import { RawClient } from '../helpers/raw-crawler.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'test-token-0123456789abcdef';

test('a submitted crawl takes what it leaves out from the scheduler configuration, not the last crawl', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), `crawl-submit-${randomUUID()}-`));
  const frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
  const sink = new FileSink({ dir });
  const configured = testJob([], {
    userAgent: 'configured/1',
    maxLinksPerPage: 77,
    proxies: ['http://127.0.0.1:9/'],
    maxPages: 50,
  });
  const saved: CrawlSettings[] = [];
  const scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(configured, TOKEN, { drainTimeoutMs: 1_000, base: configured }),
    frontier,
    sink,
    logger: silentLogger(),
    saveJob: (job) => saved.push(job),
  });
  const url = await scheduler.start();
  const client = await RawClient.connect(url, { token: TOKEN });
  t.after(async () => {
    await client.close();
    await scheduler.close();
    await sink.close();
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await client.hello();
  // Protocol 4: a run's fetch settings reach a crawler in a `run` message ahead of its tasks.
  const settings = (): Extract<SchedulerMessage, { type: 'run' }>['fetch'][] =>
    client.messages.flatMap((m) => (m.type === 'run' ? [m.fetch] : []));

  await scheduler.submit(
    crawlRequestSchema.parse({
      seeds: ['http://a.test/'],
      userAgent: 'first/1',
      maxLinksPerPage: 9,
      proxies: [],
    }),
  );
  client.credit(1);
  await waitFor(() => settings().length === 1, { timeoutMs: 5_000, message: 'a run settings message' });
  assert.equal(settings()[0]?.userAgent, 'first/1');
  assert.equal(settings()[0]?.maxLinksPerPage, 9);
  assert.equal(settings()[0]?.proxies, undefined, 'an empty list: direct');
  assert.equal(saved[0]?.maxPages, 50, 'the configured page cap');

  await scheduler.submit(crawlRequestSchema.parse({ seeds: ['http://b.test/'] }));
  client.credit(1);
  await waitFor(() => settings().length === 2, {
    timeoutMs: 5_000,
    message: 'a second run settings message',
  });
  assert.equal(settings()[1]?.userAgent, 'configured/1');
  assert.equal(settings()[1]?.maxLinksPerPage, 77);
  assert.deepEqual(settings()[1]?.proxies, ['http://127.0.0.1:9/']);
  assert.deepEqual(saved[1]?.seeds, ['http://a.test/', 'http://b.test/'], 'scope grows with the seeds');
});
