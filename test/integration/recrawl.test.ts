import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createFetcherFactory } from '../../client/crawler/fetch/fetcher-factory.js';
import { failureOutcome } from '../../client/crawler/page/failure-outcome.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { SchedulerClient } from '../../client/crawler/scheduler-client.js';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import { ValidatorsIndex } from '../../scheduler/recrawl/validators-index.js';
import type { RunFinished } from '../../scheduler/runs/run-host.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import { outcomeFrameLimit } from '../../shared/protocol/frame-limits.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { startConditionalSite, type ConditionalSite } from '../helpers/conditional-site.js';
import { readRecords } from '../helpers/records.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'recrawl-test-token-0123456789abcdef';
const JOB = 'job-recrawl';

/** `/a/deep` is reachable only through `/` and `/a`: a not-modified run must follow their links. */
const PAGES: Record<string, string[]> = {
  '/': ['/a', '/b', '/c'],
  '/a': ['/a/deep'],
  '/a/deep': [],
  '/b': [],
  '/c': [],
};
const PATHS = Object.keys(PAGES);

/** One scheduler process's worth of parts: frontier, sink, recrawl index, scheduler, one crawler. */
interface Harness {
  scheduler: CrawlScheduler;
  finished: RunFinished[];
  close(): Promise<void>;
}

async function startHarness(dir: string): Promise<Harness> {
  const frontier: SqliteFrontier = openSqliteFrontier({
    path: join(dir, 'frontier.sqlite'),
    leaseMs: 60_000,
  });
  const sink = new FileSink({ dir });
  const recrawl = new ValidatorsIndex({ path: join(dir, 'recrawl-index.sqlite') });
  const scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(testJob([], { allowPrivate: true }), TOKEN, { bufferSize: 50 }),
    frontier,
    sink,
    recrawl,
    logger: silentLogger(),
  });
  const finished: RunFinished[] = [];
  scheduler.onRunFinished((f) => finished.push(f));
  const url = await scheduler.start();
  const fetcherFor = createFetcherFactory({ maxSockets: 8, logger: silentLogger() });
  const client = new SchedulerClient({
    url,
    token: TOKEN,
    crawlerId: 'recrawl-crawler',
    concurrency: 4,
    logger: silentLogger(),
    work: (task, settings, started) =>
      processTask(task, {
        fetcher: fetcherFor(settings),
        crawlerId: 'recrawl-crawler',
        maxFrameBytes: outcomeFrameLimit(settings),
        ...(task.reportStart ? { onRequestSent: started } : {}),
      }),
    failed: (task, err) => failureOutcome(task, err, 'recrawl-crawler'),
  });
  client.start();
  return {
    scheduler,
    finished,
    close: async () => {
      await client.close(2_000);
      await scheduler.close();
      recrawl.close();
      await sink.close();
      await frontier.close();
    },
  };
}

describe('recrawl: conditional requests from the last capture of the same job', () => {
  let dir: string;
  let site: ConditionalSite;
  let harness: Harness;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `recrawl-${randomUUID()}-`));
    site = await startConditionalSite(PAGES);
  });

  after(async () => {
    await harness.close();
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `runId` of the job to its end; its records by path, and the requests it caused. */
  async function crawl(runId: string, conditionalRequests = true) {
    const before = site.requests.length;
    await harness.scheduler.startRun({
      runId,
      jobId: JOB,
      settings: testJob([site.url], { scope: 'host', allowPrivate: true, conditionalRequests }),
    });
    await waitFor(() => harness.finished.some((f) => f.runId === runId), {
      timeoutMs: 20_000,
      message: `${runId} finished`,
    });
    assert.equal(harness.finished.find((f) => f.runId === runId)?.outcome, 'succeeded');
    await waitFor(() => readRecords(dir).filter((r) => r.runId === runId).length >= PATHS.length, {
      timeoutMs: 10_000,
      message: `${runId} records durable`,
    });
    const records = readRecords(dir).filter((r) => r.runId === runId);
    const byPath = new Map<string, PageRecord>();
    for (const r of records) {
      assert.ok(pageRecordSchema.safeParse(r).success, `${r.url} is a valid record`);
      byPath.set(new URL(r.url).pathname, r);
    }
    assert.equal(records.length, PATHS.length, `${runId}: one record per page, nothing lost`);
    assert.deepEqual([...byPath.keys()].sort(), [...PATHS].sort());
    return { byPath, requests: site.requests.slice(before) };
  }

  const reportOf = (runId: string) => harness.scheduler.reports().find((r) => r.runId === runId);

  test('run 1 fetches in full; run 2 (after a restart) sends validators: 304s become not-modified records, the changed page is fetched', async () => {
    harness = await startHarness(dir);
    const first = await crawl('run-1');
    assert.equal(first.requests.length, PATHS.length);
    assert.ok(first.requests.every((r) => r.ifNoneMatch === null && r.ifModifiedSince === null));
    for (const r of first.byPath.values()) {
      assert.equal(r.outcome, 'ok');
      assert.ok(r.body?.includes('v1'));
    }

    await waitFor(() => reportOf('run-1')?.counters.done === PATHS.length, {
      timeoutMs: 10_000,
      message: 'run-1 counted',
    });
    assert.equal(reportOf('run-1')?.counters.notModified, 0, 'a first run has no not-modified page');

    // A restarted scheduler keeps its index.
    await harness.close();
    harness = await startHarness(dir);
    site.change('/b');
    const second = await crawl('run-2');

    // Every page the first run fetched was asked for with its validators, once.
    assert.equal(second.requests.length, PATHS.length);
    for (const path of PATHS) {
      const [request, ...more] = second.requests.filter((r) => r.path === path);
      assert.equal(more.length, 0, `${path} requested once`);
      const earlier = first.byPath.get(path);
      assert.equal(request?.ifNoneMatch, earlier?.headers['etag'], `${path} sent If-None-Match`);
      assert.equal(
        request?.ifModifiedSince,
        earlier?.headers['last-modified'],
        `${path} sent If-Modified-Since`,
      );
    }
    for (const path of PATHS.filter((p) => p !== '/b')) {
      const r = second.byPath.get(path);
      assert.equal(r?.outcome, 'not-modified', path);
      assert.equal(r?.status, 304);
      assert.equal(r?.body, null);
      assert.equal(r?.bodyBytes, 0);
      assert.equal(r?.error, null);
      assert.equal(
        r?.previousCaptureId,
        first.byPath.get(path)?.captureId,
        `${path} names the capture it confirms`,
      );
    }
    const changed = second.byPath.get('/b');
    assert.equal(changed?.outcome, 'ok');
    assert.equal(changed?.status, 200);
    assert.ok(changed?.body?.includes('/b v2'));
    assert.equal(changed?.previousCaptureId, undefined);
    // `/a/deep` was reached through the links of the not-modified `/` and `/a`.
    assert.equal(second.byPath.get('/a/deep')?.parentUrl, new URL('/a', site.url).href);

    await waitFor(() => reportOf('run-2')?.counters.notModified === PATHS.length - 1, {
      timeoutMs: 10_000,
      message: 'run-2 counts its not-modified pages',
    });
    const counters = reportOf('run-2')?.counters;
    assert.equal(counters?.done, PATHS.length, 'not-modified pages are done, not failed');
    assert.equal(counters?.failed, 0);
  });

  test('run 3: a 304 confirms the last capture with a body; run 4 with conditionalRequests off fetches in full', async () => {
    const second = readRecords(dir).filter((r) => r.runId === 'run-2');
    const first = readRecords(dir).filter((r) => r.runId === 'run-1');
    const capture = (records: PageRecord[], path: string) =>
      records.find((r) => new URL(r.url).pathname === path)?.captureId;

    const third = await crawl('run-3');
    assert.equal(third.requests.length, PATHS.length);
    assert.ok(third.requests.every((r) => r.status === 304 && r.ifNoneMatch !== null));
    for (const path of PATHS) {
      const r = third.byPath.get(path);
      assert.equal(r?.outcome, 'not-modified', path);
      // `/b` changed in run 2, whose capture has its body; the others still point at run 1's.
      const expected = path === '/b' ? capture(second, path) : capture(first, path);
      assert.equal(r?.previousCaptureId, expected, path);
    }
    await waitFor(() => reportOf('run-3')?.counters.notModified === PATHS.length, {
      timeoutMs: 10_000,
      message: 'run-3 counts its not-modified pages',
    });

    const fourth = await crawl('run-4', false);
    assert.equal(fourth.requests.length, PATHS.length);
    assert.ok(fourth.requests.every((r) => r.ifNoneMatch === null && r.ifModifiedSince === null));
    assert.ok([...fourth.byPath.values()].every((r) => r.outcome === 'ok' && r.body !== null));
    assert.equal(reportOf('run-4')?.counters.notModified, 0);
  });
});
