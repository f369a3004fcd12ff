import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { readDistinctPages } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 1_500;
/** How long the alarm lasts: well under the publish confirm timeout (30 s), so no link is reset. */
const ALARM_MS = 8_000;
/** The node's own limit, as scripts/services.sh starts it (rabbitmqctl status: 0.05 gb). */
const USUAL_LIMIT = '50MB';

const run = promisify(execFile);
const SERVICES = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));
const rabbitmqctl = async (...args: string[]): Promise<string> =>
  (await run('bash', [SERVICES, 'rabbitmqctl', ...args], { timeout: 60_000 })).stdout;

function logMessages(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return (JSON.parse(l) as { msg?: string }).msg ?? '';
      } catch {
        return '';
      }
    });
}

/**
 * RabbitMQ's disk alarm (its disk nearly full, as it sees it) blocks every connection that
 * publishes until it clears. Mid-crawl, the scheduler's settles wait on their confirms: nothing may
 * be lost, the scheduler must not give up, and the crawl must go on once the alarm clears.
 */
describe('a RabbitMQ disk alarm during a cluster crawl', () => {
  let site: GeneratedSite;
  let cluster: Cluster;
  before(async () => {
    // Slow enough pages that the crawl is still finding new URLs (publishing them) when it goes off.
    site = await startGeneratedSite({ pages: PAGES, responseDelayMs: 50 });
    cluster = await startCluster({
      agents: 1,
      processes: 2,
      captureSchedulerLog: true,
      env: { ACKCRAWL_LOG_LEVEL: 'info' },
    });
  });
  after(async () => {
    // Never leave the shared node alarmed for the tests after this one.
    await rabbitmqctl('set_disk_free_limit', USUAL_LIMIT);
    await cluster.stop();
    await site.close();
  });

  test('publishing blocks, the scheduler waits, and the crawl ends whole once the alarm clears', async () => {
    const crawl = cluster.crawl(site.url, { hostConcurrency: 16, hostDelayMs: 0 });
    // Early, while most links are new: a connection is blocked when it next publishes.
    await waitFor(() => site.stats().distinctPages >= 60, {
      timeoutMs: 60_000,
      intervalMs: 20,
      message: '60 pages fetched',
    });
    // Far more than the disk has: the alarm goes off at once.
    await rabbitmqctl('set_disk_free_limit', '100000GB');
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
      console.log(
        `# rabbitmq disk alarm: blocked at ${servedAtBlock} pages, ${site.stats().distinctPages} ` +
          `fetched by the end of the ${ALARM_MS / 1000} s alarm`,
      );
    } finally {
      await rabbitmqctl('set_disk_free_limit', USUAL_LIMIT);
    }
    const clearedAt = Date.now();
    await waitFor(() => logMessages(cluster.schedulerLog()).some((m) => /unblocked publishing/.test(m)), {
      timeoutMs: 15_000,
      message: 'the scheduler told of the unblock',
    });
    const result = await crawl.done;
    const doneMs = Date.now() - clearedAt;
    assert.equal(result.code, 0, result.stderr.slice(-3000));
    assert.equal((JSON.parse(result.stdout) as { pages: number }).pages, PAGES, 'every page settled');
    const records = await readDistinctPages(cluster.topic, PAGES);
    const urls = new Set(records.map((r) => r.url));
    assert.equal(urls.size, PAGES, 'every page in Kafka');
    const duplicates = records.length - urls.size;
    console.log(
      `# rabbitmq disk alarm: crawl over ${(doneMs / 1000).toFixed(1)} s after it cleared; ` +
        `${records.length} records for ${PAGES} pages, ${duplicates} duplicates, ` +
        `${site.stats().pageResponses - PAGES} pages fetched twice`,
    );
    assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
  });
});
