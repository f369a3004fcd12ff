import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { logLines, logMessages } from '../helpers/log-lines.js';
import { parsePrometheusText, sampleValue, type Family } from '../helpers/prometheus-text.js';
import { rabbitDiskAlarm } from '../helpers/service-control.js';
import { expectWholeCrawl } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 1_500;

/** The scheduler's warnings and errors, with their fields, for a failure to say what went out again. */
const warnings = (log: string): string =>
  logLines(log)
    .filter((line) => (line.level ?? 0) >= 40)
    .map((line) => JSON.stringify(line))
    .slice(-40)
    .join('\n');
/**
 * How long the alarm lasts: longer than the scheduler's publish confirm timeout (30 s), which must
 * not count time the broker blocks the connection. When it did, the link was dropped at 30 s and
 * every delivery the scheduler held went back to be fetched again (638 of 1,500 pages, once).
 */
const ALARM_MS = 35_000;
/**
 * The scheduler's task lease, shorter than the alarm here (120 s by default): an outcome that waits
 * for the broker is delivered already, so its lease must not run out and send the task again.
 */
const LEASE_MS = 15_000;

/**
 * RabbitMQ's disk alarm (its disk nearly full, as it sees it) blocks every connection that
 * publishes until it clears. Mid-crawl, the scheduler's settles wait on their confirms: nothing may
 * be lost, the scheduler must not give up, and the crawl must go on once the alarm clears.
 */
describe('a RabbitMQ disk alarm during a cluster crawl', () => {
  let site: GeneratedSite;
  let cluster: Cluster;
  before(async () => {
    // The scheduler is blocked only when it next publishes, so the crawl must still be finding new
    // URLs when the alarm goes off (rabbitmqctl takes seconds to raise it): pages slow enough, and
    // few links each (the next page and one other), so new URLs keep coming until near the end.
    // With 20 links a page every URL was known some 500 pages in, and a late alarm blocked nothing.
    site = await startGeneratedSite({ pages: PAGES, responseDelayMs: 100, linksPerPage: 4 });
    cluster = await startCluster({
      agents: 1,
      processes: 2,
      captureSchedulerLog: true,
      env: { ACKCRAWL_LOG_LEVEL: 'info', ACKCRAWL_LEASE_MS: String(LEASE_MS) },
    });
  });
  after(async () => {
    // Never leave the shared node alarmed for the tests after this one.
    await rabbitDiskAlarm.clear();
    await cluster.stop();
    await site.close();
  });

  const schedulerMetrics = async (): Promise<Map<string, Family>> => {
    const url = cluster.schedulerUrl.replace(/^ws:/, 'http:').replace(/\/crawlers$/, '/metrics');
    const answer = await fetch(url, { headers: { authorization: `Bearer ${cluster.token}` } });
    assert.equal(answer.status, 200, 'the scheduler serves /metrics');
    return parsePrometheusText(await answer.text());
  };

  test('publishing blocks, the scheduler waits, and the crawl ends whole once the alarm clears', async () => {
    const crawl = cluster.crawl(site.url, { hostConcurrency: 16, hostDelayMs: 0 });
    // Early, while most links are new: a connection is blocked when it next publishes.
    await waitFor(() => site.stats().distinctPages >= 60, {
      timeoutMs: 60_000,
      intervalMs: 20,
      message: '60 pages fetched',
    });
    await rabbitDiskAlarm.raise();
    const alarmedAt = Date.now();
    try {
      await waitFor(() => logMessages(cluster.schedulerLog()).some((m) => /blocked publishing/.test(m)), {
        timeoutMs: 15_000,
        message: `the scheduler told of the block; its log: ${cluster.schedulerLog().slice(-2000)}`,
      });
      const servedAtBlock = site.stats().distinctPages;
      await waitFor(() => Date.now() - alarmedAt >= ALARM_MS || cluster.scheduler().exitCode !== null, {
        timeoutMs: ALARM_MS + 5_000,
      });
      assert.equal(cluster.scheduler().exitCode, null, 'the scheduler waits instead of exiting');
      assert.equal(crawl.child.exitCode, null, 'the crawl is not over');
      // What an operator's dashboard reads meanwhile: the block, and outcomes waiting for it.
      const during = await schedulerMetrics();
      assert.equal(sampleValue(during, 'ackcrawl_frontier_publish_blocked'), 1, 'the block is on /metrics');
      const waitS = sampleValue(during, 'ackcrawl_settle_wait_seconds') ?? 0;
      assert.ok(waitS >= ALARM_MS / 2000, `the settle wait shows the stall (${waitS} s)`);
      console.log(
        `# rabbitmq disk alarm: blocked at ${servedAtBlock} pages, ${site.stats().distinctPages} ` +
          `fetched by the end of the ${ALARM_MS / 1000} s alarm`,
      );
    } finally {
      await rabbitDiskAlarm.clear();
    }
    const clearedAt = Date.now();
    await waitFor(() => logMessages(cluster.schedulerLog()).some((m) => /unblocked publishing/.test(m)), {
      timeoutMs: 15_000,
      message: 'the scheduler told of the unblock',
    });
    assert.equal(sampleValue(await schedulerMetrics(), 'ackcrawl_frontier_publish_blocked'), 0);
    await crawl.done;
    const doneMs = Date.now() - clearedAt;
    const { records, duplicates } = await expectWholeCrawl(crawl, cluster.topic, PAGES);
    console.log(
      `# rabbitmq disk alarm: crawl over ${(doneMs / 1000).toFixed(1)} s after it cleared; ` +
        `${records.length} records for ${PAGES} pages, ${duplicates} duplicates, ` +
        `${site.stats().pageResponses - PAGES} pages fetched twice`,
    );
    assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
    const refetched = site.stats().pageResponses - PAGES;
    assert.ok(
      refetched < PAGES * 0.005,
      `no lease ran out during the alarm: ${refetched} pages fetched twice; the scheduler's warnings:\n` +
        warnings(cluster.schedulerLog()),
    );
    assert.deepEqual(
      logMessages(cluster.schedulerLog()).filter((m) => m === 'dropping the broker link'),
      [],
      'the scheduler kept its link (and its deliveries) through the alarm',
    );
  });
});
