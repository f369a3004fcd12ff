import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { expectWholeCrawl } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = Number(process.env.ACKCRAWL_TEST_KILL_PAGES ?? 20_000);
/** When to kill: once the site served this share of its pages. */
const KILLS_AT = [0.2, 0.45, 0.7];

describe(`kill -9 the scheduler ${KILLS_AT.length} times during a ${PAGES}-page cluster crawl`, () => {
  let site: GeneratedSite;
  let cluster: Cluster;
  before(async () => {
    site = await startGeneratedSite({ pages: PAGES });
    cluster = await startCluster({ agents: 1, processes: 2 });
  });
  after(async () => {
    await cluster.stop();
    await site.close();
  });

  test('every page arrives, and tasks whose record was durable are settled from it: under 0.1% duplicates', async () => {
    const started = Date.now();
    const run = cluster.crawl(site.url, { hostConcurrency: 32, hostDelayMs: 0 });
    const stalls: number[] = [];
    for (const share of KILLS_AT) {
      await waitFor(() => site.stats().distinctPages >= PAGES * share, {
        timeoutMs: 120_000,
        message: `${share * 100}% of the pages fetched`,
      });
      const killedAt = Date.now();
      const served = site.stats().pageResponses;
      await cluster.killScheduler();
      // The cost in time: from the kill until pages are served again.
      await waitFor(() => site.stats().pageResponses > served + 50, {
        timeoutMs: 60_000,
        message: 'the crawl going on after the restart',
      });
      stalls.push(Date.now() - killedAt);
    }
    const { records, duplicates } = await expectWholeCrawl(run, cluster.topic, PAGES);
    assert.ok(
      records.every((r) => r.outcome === 'ok'),
      'every page ok',
    );
    const refetched = site.stats().pageResponses - PAGES;
    console.log(
      `# scheduler killed ${KILLS_AT.length} times: ${records.length} records for ${PAGES} pages, ` +
        `${duplicates} duplicates (${((duplicates / PAGES) * 100).toFixed(2)}%), ${refetched} pages fetched twice, ` +
        `crawl paused ${stalls.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')} per kill, ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s in all`,
    );
    assert.ok(duplicates < PAGES * 0.001, `duplicates under 0.1% (${duplicates})`);
  });
});
