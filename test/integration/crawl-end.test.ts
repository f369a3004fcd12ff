import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import type { CrawlSummary } from '../../scheduler/progress.js';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { okOutcome, pageRecord, RawClient } from '../helpers/raw-crawler.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'test-token-0123456789abcdef';

/**
 * The scheduler reads its frontier's counters every 250 ms, and that periodic tick is where a run
 * used to be found finished: a crawl's end, and its summary, came up to 250 ms after its last page.
 * Here the periodic timers are frozen, so the summary can only come from the settle of the last
 * outcome.
 */
test('a crawl ends as its last outcome is settled, not at the next periodic tick', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'crawl-end-'));
  const frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
  const sink = new FileSink({ dir });
  let summary: CrawlSummary | null = null;
  t.mock.timers.enable({ apis: ['setInterval'] });
  const scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(testJob(['http://a.test/', 'http://b.test/']), TOKEN, {
      drainTimeoutMs: 1_000,
    }),
    frontier,
    sink,
    logger: silentLogger(),
    onDone: (s) => (summary = s),
  });
  const client = await RawClient.connect(await scheduler.start(), { token: TOKEN });
  try {
    await client.hello();
    client.credit(2);
    await waitFor(() => client.tasks().length === 2, { timeoutMs: 5_000, message: 'both seeds sent' });
    const [first, second] = client.tasks();
    assert.ok(first && second);
    client.binary(encodeOutcomeFrame(okOutcome(first.taskId), pageRecord(first)));
    await waitFor(async () => (await frontier.stats()).done === 1, {
      timeoutMs: 5_000,
      message: 'first done',
    });
    assert.equal(summary, null, 'one page is still in flight: the crawl is not over');

    client.binary(encodeOutcomeFrame(okOutcome(second.taskId), pageRecord(second)));
    await waitFor(() => summary !== null, {
      timeoutMs: 5_000,
      message: 'the summary, with the periodic tick frozen',
    });
    assert.equal(summary!.pages, 2);
    assert.equal(summary!.ok, 2);
  } finally {
    t.mock.timers.reset();
    await client.close();
    await scheduler.close();
    await sink.close();
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
