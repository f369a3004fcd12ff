import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { pagePath } from '../../scripts/site/page-renderer.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import type { CliRun } from '../helpers/cli.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { isAlive } from '../helpers/process-tree.js';
import { crawlerIdOf, peerPid } from '../helpers/socket-owner.js';
import { readPageRecords } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * Crawler faults on the real cluster (RabbitMQ frontier, Kafka sink, agents that restart their
 * crawlers), not the embedded crawl: what a dead, hung or stopping crawler costs depends on the
 * RabbitMQ frontier's leases, releases and redeliveries, which the embedded SQLite frontier does
 * differently. The site answers each page after 200 ms, so every crawler always has requests in
 * flight when a fault hits it.
 */
const PAGES = 1500;
const DELAY_MS = 200;
/** Crawler kills in the random-kill test, one every 1.5 s from the start of the crawl. */
const MAX_KILLS = 9;

interface SiteWithCounts {
  site: GeneratedSite;
  /** Requests per page, repeats included. */
  requests: Map<number, number>;
  /** Runs before the site answers a page; true: the page was taken over. */
  onPage: (page: number, req: import('node:http').IncomingMessage) => boolean;
}

async function startSite(): Promise<SiteWithCounts> {
  const requests = new Map<number, number>();
  const state: SiteWithCounts = {
    site: undefined as unknown as GeneratedSite,
    requests,
    onPage: () => false,
  };
  state.site = await startGeneratedSite({
    pages: PAGES,
    responseDelayMs: DELAY_MS,
    intercept: (page, req) => {
      requests.set(page, (requests.get(page) ?? 0) + 1);
      return state.onPage(page, req);
    },
  });
  return state;
}

interface Summary {
  pages: number;
  ok: number;
  failed: number;
}

async function finish(run: CliRun): Promise<Summary> {
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Summary;
}

/** Every page's records in Kafka, duplicates counted and printed. */
async function delivered(
  name: string,
  cluster: Cluster,
  counts: SiteWithCounts,
): Promise<{ byUrl: Map<string, PageRecord[]>; duplicates: number }> {
  const records = await readPageRecords(cluster.topic, (r) => new Set(r.map((x) => x.url)).size >= PAGES);
  const byUrl = new Map<string, PageRecord[]>();
  for (const record of records) byUrl.set(record.url, [...(byUrl.get(record.url) ?? []), record]);
  const duplicates = records.length - byUrl.size;
  const served = [...counts.requests.values()].reduce((a, b) => a + b, 0);
  console.log(
    `# ${name}: ${records.length} records for ${PAGES} pages, ${duplicates} duplicates (${((duplicates / PAGES) * 100).toFixed(2)}%); ` +
      `site served ${served} page requests, ${served - counts.requests.size} of them repeats`,
  );
  return { byUrl, duplicates };
}

const urlOf = (site: GeneratedSite, page: number): string => new URL(pagePath(page), site.url).href;

describe('crawler faults on the cluster', () => {
  let counts: SiteWithCounts;
  before(async () => {
    counts = await startSite();
  });
  after(async () => {
    await counts.site.close();
  });

  test('a hung crawler (SIGSTOP past its lease): its tasks are done by others, its late outcomes refused', async () => {
    counts.requests.clear();
    counts.site.resetStats();
    counts.onPage = () => false;
    const cluster = await startCluster({
      agents: 2,
      processes: 2,
      // Three silent heartbeats (1.5 s) drop a crawler; the stop lasts 5 s, past the 2 s lease.
      env: { ACKCRAWL_LEASE_MS: '2000', ACKCRAWL_HEARTBEAT_MS: '500' },
    });
    let victim: number | undefined;
    try {
      const run = cluster.crawl(counts.site.url, { hostConcurrency: 32, hostDelayMs: 0 });
      await waitFor(() => counts.site.stats().distinctPages >= 300, {
        timeoutMs: 60_000,
        message: '300 pages',
      });
      victim = cluster.crawlers()[0];
      assert.ok(victim);
      const victimId = crawlerIdOf(victim);
      assert.ok(victimId);
      process.kill(victim, 'SIGSTOP');
      const stoppedAt = Date.now();
      const pagesAtStop = counts.site.stats().distinctPages;
      await waitFor(() => counts.site.stats().distinctPages >= pagesAtStop + 200, {
        timeoutMs: 30_000,
        message: 'the others crawl on while it is stopped',
      });
      await waitFor(() => Date.now() - stoppedAt >= 5_000, { timeoutMs: 10_000, message: '5 s stopped' });
      process.kill(victim, 'SIGCONT');
      victim = undefined;

      const summary = await finish(run);
      assert.deepEqual(
        { pages: summary.pages, ok: summary.ok, failed: summary.failed },
        { pages: PAGES, ok: PAGES, failed: 0 },
        'summary counts exact',
      );
      const { byUrl, duplicates } = await delivered('hung crawler', cluster, counts);
      assert.equal(byUrl.size, PAGES, 'every page in Kafka');
      // Pages the stopped crawler had requested were requested again by another crawler; each
      // has one record, not the stopped crawler's: its outcomes came too late and were refused.
      // Pages the stopped crawler had requested were requested again once it was dropped (by
      // another crawler, or by itself after it woke and reconnected). Each has one record, from
      // that second fetch: the stopped crawler's outcomes came too late and were refused.
      const twice = [...counts.requests].filter(([, n]) => n > 1).map(([page]) => page);
      assert.ok(twice.length > 0, 'the stopped crawler had requests in flight');
      let byOthers = 0;
      for (const page of twice) {
        const records = byUrl.get(urlOf(counts.site, page)) ?? [];
        assert.equal(records.length, 1, `page ${page}: ${records.length} records`);
        const [record] = records as [PageRecord];
        const late = record.crawlerId === victimId && Date.parse(record.fetchedAt) < stoppedAt;
        assert.ok(!late, `page ${page}: the stopped crawler's late outcome was taken`);
        if (record.crawlerId !== victimId) byOthers += 1;
      }
      console.log(
        `# hung crawler: ${twice.length} pages it was fetching were fetched again, ${byOthers} by other crawlers`,
      );
      assert.equal(duplicates, 0, 'no record twice');
    } finally {
      if (victim !== undefined && isAlive(victim)) process.kill(victim, 'SIGCONT');
      await cluster.stop();
    }
  });

  test('SIGTERM each crawler in turn mid-crawl: nothing is fetched twice', async () => {
    counts.requests.clear();
    counts.site.resetStats();
    counts.onPage = () => false;
    const cluster = await startCluster({ agents: 2, processes: 2 });
    try {
      const run = cluster.crawl(counts.site.url, { hostConcurrency: 32, hostDelayMs: 0 });
      await waitFor(() => counts.site.stats().distinctPages >= 150, {
        timeoutMs: 60_000,
        message: '150 pages',
      });
      const original = cluster.crawlers();
      assert.equal(original.length, 4);
      for (const pid of original) {
        const before = counts.site.stats().distinctPages;
        process.kill(pid, 'SIGTERM');
        await waitFor(() => !isAlive(pid), {
          timeoutMs: 30_000,
          message: `crawler ${pid} drained and exited`,
        });
        await waitFor(() => cluster.crawlers().length === 4, {
          timeoutMs: 15_000,
          message: 'agent restarted it',
        });
        await waitFor(() => counts.site.stats().distinctPages >= Math.min(before + 100, PAGES), {
          timeoutMs: 30_000,
          message: 'the crawl goes on',
        });
      }
      assert.ok(counts.site.stats().distinctPages < PAGES, 'every SIGTERM came mid-crawl');

      const summary = await finish(run);
      assert.deepEqual(
        { pages: summary.pages, ok: summary.ok, failed: summary.failed },
        { pages: PAGES, ok: PAGES, failed: 0 },
      );
      const { byUrl, duplicates } = await delivered('SIGTERM each crawler', cluster, counts);
      assert.equal(byUrl.size, PAGES);
      const repeats = [...counts.requests].filter(([, n]) => n > 1);
      assert.deepEqual(repeats, [], 'each page served exactly once');
      assert.equal(counts.requests.size, PAGES);
      assert.equal(duplicates, 0);
    } finally {
      await cluster.stop();
    }
  });

  test('SIGTERM the scheduler mid-crawl and start it again: what was in flight is finished, not fetched again', async () => {
    counts.requests.clear();
    counts.site.resetStats();
    counts.onPage = () => false;
    const cluster = await startCluster({ agents: 2, processes: 2 });
    try {
      const run = cluster.crawl(counts.site.url, { hostConcurrency: 32, hostDelayMs: 0 });
      for (const threshold of [300, 800]) {
        await waitFor(() => counts.site.stats().distinctPages >= threshold, {
          timeoutMs: 60_000,
          message: `${threshold} pages`,
        });
        const scheduler = cluster.scheduler();
        const exited = new Promise<number | null>((resolve) =>
          scheduler.once('exit', (code) => resolve(code)),
        );
        scheduler.kill('SIGTERM');
        assert.equal(await exited, 0, 'the scheduler drained and exited cleanly');
        await cluster.startScheduler();
      }
      const summary = await finish(run);
      assert.equal(summary.pages, PAGES);
      const { byUrl, duplicates } = await delivered('SIGTERM the scheduler twice', cluster, counts);
      assert.equal(byUrl.size, PAGES);
      assert.ok(
        [...byUrl.values()].flat().every((r) => r.outcome === 'ok' && r.attempt === 1),
        'every page ok at its first attempt',
      );
      assert.deepEqual(
        [...counts.requests].filter(([, n]) => n > 1),
        [],
        'each page served exactly once',
      );
      assert.equal(duplicates, 0);
    } finally {
      await cluster.stop();
    }
  });

  // A fixed number of kills: killing for as long as the crawl lasts would make the test's load
  // depend on the machine's speed (a slow run gets more kills, the agent pauses crashing slots,
  // the run gets slower still), and three kills of one task's crawlers are then a matter of luck.
  test(`kill -9 a random crawler every 1.5 s (${MAX_KILLS} kills) on a slow site: every page ok, bystanders rarely lose an attempt`, async () => {
    counts.requests.clear();
    counts.site.resetStats();
    counts.onPage = () => false;
    const cluster = await startCluster({ agents: 2, processes: 2 });
    let kills = 0;
    try {
      const run = cluster.crawl(counts.site.url, { hostConcurrency: 32, hostDelayMs: 0 });
      const killer = setInterval(() => {
        if (kills >= MAX_KILLS) return;
        const pids = cluster.crawlers();
        const victim = pids[Math.floor(Math.random() * pids.length)];
        if (victim === undefined) return;
        try {
          process.kill(victim, 'SIGKILL');
          kills += 1;
        } catch {
          // already gone
        }
      }, 1500);
      const summary = await finish(run).finally(() => clearInterval(killer));
      assert.ok(kills >= 3, `crawlers were killed during the crawl (${kills})`);
      assert.deepEqual(
        { pages: summary.pages, ok: summary.ok, failed: summary.failed },
        { pages: PAGES, ok: PAGES, failed: 0 },
        'no bystander ended as CRAWLER_CRASHED',
      );
      const { byUrl, duplicates } = await delivered(`${kills} random kills`, cluster, counts);
      assert.equal(byUrl.size, PAGES);
      const records = [...byUrl.values()].flat();
      assert.ok(
        records.every((r) => r.outcome === 'ok'),
        'every page ok',
      );
      // Each repeat at the site is a task a killed crawler was working on: a strike. The first two
      // of a task count no attempt; a page on a later attempt was struck three times.
      const later = records.filter((r) => r.attempt > 1).length;
      const repeats = [...counts.requests.values()].reduce((a, n) => a + n - 1, 0);
      const twice = [...counts.requests.values()].filter((n) => n > 2).length;
      console.log(
        `# ${kills} random kills: ${repeats} strikes, ${twice} pages struck twice or more, ${later} had an attempt counted`,
      );
      assert.ok(later <= Math.max(3, repeats * 0.1), `${later} of ${repeats} struck pages lost an attempt`);
      assert.ok(duplicates < PAGES * 0.01, `duplicates under 1% (${duplicates})`);
    } finally {
      await cluster.stop();
    }
  });

  test('a poison URL that kills whichever crawler fetches it: CRAWLER_CRASHED, every other page done', async () => {
    counts.requests.clear();
    counts.site.resetStats();
    const POISON = 600;
    const cluster = await startCluster({ agents: 2, processes: 2 });
    const kills: (number | null)[] = [];
    counts.onPage = (page, req) => {
      if (page !== POISON) return false;
      // The crawler whose socket this request came on, among the crawlers this test started only.
      const pid = peerPid(req.socket.remotePort ?? 0, counts.site.port, cluster.crawlers());
      kills.push(pid);
      if (pid === null) req.socket.destroy();
      else process.kill(pid, 'SIGKILL');
      return true;
    };
    try {
      const summary = await finish(cluster.crawl(counts.site.url, { hostConcurrency: 32, hostDelayMs: 0 }));
      assert.deepEqual(
        { pages: summary.pages, ok: summary.ok, failed: summary.failed },
        { pages: PAGES, ok: PAGES - 1, failed: 1 },
      );
      assert.equal(kills.length, 4, `the poison was fetched ${kills.length} times`);
      assert.ok(
        kills.every((pid) => pid !== null),
        'each time by a crawler it then killed',
      );
      const { byUrl, duplicates } = await delivered('poison URL', cluster, counts);
      assert.equal(
        duplicates,
        0,
        'what the dead crawlers were running was fetched again, not recorded twice',
      );
      assert.equal(byUrl.size, PAGES);
      const [poison, ...more] = byUrl.get(urlOf(counts.site, POISON)) ?? [];
      assert.equal(more.length, 0);
      assert.equal(poison?.outcome, 'failed');
      assert.equal(poison?.error?.code, 'CRAWLER_CRASHED');
      assert.equal(poison?.attempt, 2, 'the third crash cost an attempt, the fourth was final');
      const others = [...byUrl.values()].flat().filter((r) => r.url !== poison?.url);
      assert.ok(
        others.every((r) => r.outcome === 'ok'),
        'every other page ok',
      );
      // The poison travels alone among suspects: the pages that shared a crawler with it went
      // back without an attempt counted.
      const counted = others.filter((r) => r.attempt > 1).length;
      console.log(`# poison URL: ${counted} other pages had an attempt counted`);
      assert.equal(counted, 0);
    } finally {
      counts.onPage = () => false;
      await cluster.stop();
    }
  });
});
