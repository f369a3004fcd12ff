import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createFetcherFactory } from '../../client/crawler/fetch/fetcher-factory.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { failureOutcome } from '../../client/crawler/page/failure-outcome.js';
import { SchedulerClient } from '../../client/crawler/scheduler-client.js';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import type { RunFinished } from '../../scheduler/runs/run-host.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import { silentLogger } from '../../shared/logger.js';
import { outcomeFrameLimit } from '../../shared/protocol/frame-limits.js';
import { readRecords } from '../helpers/records.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'many-runs-token-0123456789abcdef';

/** A site of one index page linking `pages` leaves; it counts requests and the peak in flight. */
interface CountingSite {
  url: string;
  hits: number;
  peakInFlight: number;
  resetPeak(): void;
  close(): Promise<void>;
}

async function startSite(pages: number, delayMs: number): Promise<CountingSite> {
  let inFlight = 0;
  const site = {
    url: '',
    hits: 0,
    peakInFlight: 0,
    resetPeak: () => (site.peakInFlight = inFlight),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    site.hits += 1;
    inFlight += 1;
    site.peakInFlight = Math.max(site.peakInFlight, inFlight);
    setTimeout(() => {
      inFlight -= 1;
      const links =
        req.url === '/'
          ? Array.from({ length: pages }, (_, i) => `<a href="/p${i + 1}">p</a>`).join('')
          : 'leaf';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><body>${links}</body></html>`);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return site;
}

const runSettings = (site: CountingSite, more: Partial<CrawlSettings> = {}): CrawlSettings =>
  testJob([site.url], { scope: 'host', allowPrivate: true, hostConcurrency: 2, ...more });

describe('one scheduler, many runs (in-process crawler, SQLite frontier, file sink)', () => {
  let dir: string;
  let frontier: SqliteFrontier;
  let sink: FileSink;
  let scheduler: CrawlScheduler;
  let client: SchedulerClient;
  const finished: RunFinished[] = [];
  const sites: CountingSite[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), `many-runs-${randomUUID()}-`));
    frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
    sink = new FileSink({ dir });
    scheduler = new CrawlScheduler({
      // No seeds: the scheduler hosts only the runs started below.
      settings: testSchedulerSettings(testJob([], { allowPrivate: true }), TOKEN, { bufferSize: 50 }),
      frontier,
      sink,
      logger: silentLogger(),
    });
    scheduler.onRunFinished((f) => finished.push(f));
    const url = await scheduler.start();
    const fetcherFor = createFetcherFactory({ maxSockets: 16, logger: silentLogger() });
    client = new SchedulerClient({
      url,
      token: TOKEN,
      crawlerId: 'in-process',
      concurrency: 8,
      logger: silentLogger(),
      work: (task, settings, started) =>
        processTask(task, {
          fetcher: fetcherFor(settings),
          crawlerId: 'in-process',
          maxFrameBytes: outcomeFrameLimit(settings),
          ...(task.reportStart ? { onRequestSent: started } : {}),
        }),
      failed: (task, err) => failureOutcome(task, err, 'in-process'),
    });
    client.start();
  });

  after(async () => {
    await client.close(2_000);
    await scheduler.close();
    await sink.close();
    await frontier.close();
    for (const site of sites) await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const report = (runId: string) => scheduler.reports().find((r) => r.runId === runId);

  test('two runs of two sites: separate, tagged records; pause holds one site still while the other goes on', async () => {
    const a = await startSite(20, 20);
    const b = await startSite(60, 150);
    sites.push(a, b);
    await scheduler.startRun({
      runId: 'run-a',
      jobId: 'job-a',
      settings: runSettings(a, { hostDelayMs: 100 }),
    });
    await scheduler.startRun({
      runId: 'run-b',
      jobId: 'job-b',
      settings: runSettings(b, { hostConcurrency: 1 }),
    });
    // Idempotent: started again, nothing changes.
    await scheduler.startRun({ runId: 'run-a', jobId: 'job-a', settings: runSettings(a) });

    await waitFor(() => a.hits >= 3, { timeoutMs: 10_000, message: 'run-a under way' });
    await scheduler.pauseRun('run-a');
    assert.equal(report('run-a')?.state, 'paused');
    // Tasks already sent to the crawler finish; then the site must stay quiet.
    await waitFor(() => report('run-a')?.counters.inFlight === 0, {
      timeoutMs: 10_000,
      message: 'run-a drained',
    });
    const aHits = a.hits;
    const bHits = b.hits;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    assert.equal(a.hits, aHits, 'no request to the paused run’s site for 10 s');
    assert.ok(b.hits >= bHits + 20, `the other run went on (${b.hits - bHits} requests)`);
    assert.ok(b.peakInFlight <= 1, 'run-b’s host limit held');
    const paused = report('run-a');
    assert.ok(paused && paused.counters.queued > 0, 'run-a keeps its queued work while paused');

    await scheduler.resumeRun('run-a');
    await waitFor(() => finished.some((f) => f.runId === 'run-a'), {
      timeoutMs: 30_000,
      message: 'run-a finished',
    });
    await waitFor(() => finished.some((f) => f.runId === 'run-b'), {
      timeoutMs: 30_000,
      message: 'run-b finished',
    });
    for (const f of finished) assert.equal(f.outcome, 'succeeded', JSON.stringify(f));

    await waitFor(() => readRecords(dir).length >= 21 + 61, {
      timeoutMs: 10_000,
      message: 'records durable',
    });
    const records = readRecords(dir);
    const ofA = records.filter((r) => r.url.startsWith(a.url));
    const ofB = records.filter((r) => r.url.startsWith(b.url));
    assert.equal(ofA.length, 21);
    assert.equal(ofB.length, 61);
    assert.ok(ofA.every((r) => r.jobId === 'job-a' && r.runId === 'run-a' && r.outcome === 'ok'));
    assert.ok(ofB.every((r) => r.jobId === 'job-b' && r.runId === 'run-b' && r.outcome === 'ok'));
    const captures = records.map((r) => r.captureId);
    assert.equal(new Set(captures).size, captures.length, 'every record has its own capture id');
    assert.equal(report('run-a')?.state, 'finished');
    assert.equal(report('run-a')?.counters.done, 21);
  });

  test('two runs on one host share its limit; the same URL in two runs is crawled by each', async () => {
    const shared = await startSite(30, 50);
    sites.push(shared);
    await scheduler.startRun({
      runId: 'run-c',
      jobId: 'job-c',
      settings: runSettings(shared, { hostConcurrency: 2 }),
    });
    await scheduler.startRun({
      runId: 'run-d',
      jobId: 'job-d',
      settings: runSettings(shared, { hostConcurrency: 3 }),
    });
    await waitFor(() => ['run-c', 'run-d'].every((id) => finished.some((f) => f.runId === id)), {
      timeoutMs: 30_000,
      message: 'both runs finished',
    });
    assert.ok(shared.peakInFlight <= 2, `peak in flight at the host: ${shared.peakInFlight} (limit 2)`);
    assert.ok(shared.peakInFlight >= 1);
    assert.equal(shared.hits, 62, 'each run fetched every page once');
  });

  test('cancel removes a run’s queued work and it never finishes', async () => {
    const slow = await startSite(40, 200);
    sites.push(slow);
    await scheduler.startRun({
      runId: 'run-e',
      jobId: 'job-e',
      settings: runSettings(slow, { hostConcurrency: 1 }),
    });
    await waitFor(() => slow.hits >= 3, { timeoutMs: 10_000, message: 'run-e under way' });
    const removed = await scheduler.cancelRun('run-e');
    assert.ok(removed > 20, `${removed} queued tasks removed`);
    assert.equal(report('run-e')?.state, 'cancelled');
    const stats = await frontier.stats('run-e');
    assert.equal(stats.ready + stats.delayed, 0, 'nothing left queued');
    await waitFor(async () => (await frontier.stats('run-e')).leased === 0, {
      timeoutMs: 10_000,
      message: 'drained',
    });
    const hits = slow.hits;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(slow.hits, hits, 'no request after the cancel drained');
    assert.equal(
      finished.some((f) => f.runId === 'run-e'),
      false,
      'a cancelled run does not finish',
    );
  });
});
