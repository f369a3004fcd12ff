import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { runCli } from '../helpers/cli.js';
import { startCluster } from '../helpers/cluster.js';
import { readPageRecords } from '../helpers/topic-records.js';
import { readRecords } from '../helpers/records.js';
import { serviceControl } from '../helpers/service-control.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 2000;

function crawlArgs(site: GeneratedSite, hostDelayMs: number): string[] {
  return [
    'crawl',
    site.url,
    '--allow-private',
    '--host-concurrency',
    '32',
    '--host-delay',
    String(hostDelayMs),
    '--json',
  ];
}

/** What must be identical between two crawls of the same site (timing and routing aside). */
function essence(r: PageRecord): unknown {
  const { date: _date, ...headers } = r.headers;
  return {
    url: r.url,
    finalUrl: r.finalUrl,
    status: r.status,
    outcome: r.outcome,
    error: r.error,
    contentType: r.contentType,
    links: r.links,
    nofollowLinks: r.nofollowLinks,
    nofollow: r.nofollow,
    redirects: r.redirects,
    headers,
    bodyBytes: r.bodyBytes,
    bodySha256: r.bodySha256,
    bodyEncoding: r.bodyEncoding,
    body: r.body,
  };
}

function distinct(records: PageRecord[]): Set<string> {
  return new Set(records.map((r) => r.url));
}

/** Every page at least once; duplicates counted, printed, and returned. */
function checkDelivery(name: string, records: PageRecord[], site: GeneratedSite): number {
  const urls = distinct(records);
  assert.equal(urls.size, PAGES, `${name}: every page in Kafka`);
  assert.ok(
    records.every((r) => r.outcome === 'ok'),
    `${name}: every page ok`,
  );
  const duplicates = records.length - urls.size;
  const share = (duplicates / PAGES) * 100;
  // On this site nothing fails: a page on a later attempt had one counted for crawlers that died
  // while working on it (a bystander of a kill, struck twice).
  const later = records.filter((r) => r.attempt > 1).length;
  console.log(
    `# ${name}: ${records.length} records for ${PAGES} pages, ${duplicates} duplicates (${share.toFixed(2)}%), site served ${site.stats().pageResponses}, ${later} on a later attempt`,
  );
  return duplicates;
}

describe('the distributed crawl on RabbitMQ, Kafka and MinIO', () => {
  let site: GeneratedSite;
  before(async () => {
    site = await startGeneratedSite({ pages: PAGES });
  });
  after(async () => {
    await site.close();
  });

  test('2 agents × 2 crawlers: Kafka holds every page exactly as the embedded crawl records it', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-embedded-'));
    const cluster = await startCluster({ agents: 2, processes: 2 });
    try {
      const embedded = await runCli([...crawlArgs(site, 0), '--out', out]);
      assert.equal(embedded.code, 0, embedded.stderr);
      const reference = new Map(readRecords(out).map((r) => [r.url, essence(r)]));
      assert.equal(reference.size, PAGES);

      site.resetStats();
      const run = cluster.crawl(site.url, { hostConcurrency: 32, hostDelayMs: 0 });
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout) as { pages: number; ok: number; out: string };
      assert.equal(summary.pages, PAGES);
      assert.equal(summary.out, `kafka:${cluster.topic}`);
      const records = await readPageRecords(cluster.topic, (r) => distinct(r).size >= PAGES);
      checkDelivery('clean run', records, site);
      for (const record of records) assert.deepEqual(essence(record), reference.get(record.url), record.url);
    } finally {
      await cluster.stop();
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('kill -9 a random crawler every 2 s: every page arrives, duplicates under 1%', async () => {
    const cluster = await startCluster({ agents: 2, processes: 2 });
    site.resetStats();
    let kills = 0;
    try {
      const run = cluster.crawl(site.url, { hostConcurrency: 32, hostDelayMs: 4 });
      const killer = setInterval(() => {
        const pids = cluster.crawlers();
        const victim = pids[Math.floor(Math.random() * pids.length)];
        if (victim === undefined) return;
        try {
          process.kill(victim, 'SIGKILL');
          kills += 1;
        } catch {
          // already gone
        }
      }, 2000);
      const result = await run.done.finally(() => clearInterval(killer));
      assert.equal(result.code, 0, result.stderr);
      assert.ok(kills >= 2, `crawlers were killed during the crawl (${kills})`);
      assert.equal(
        (JSON.parse(result.stdout) as { pages: number }).pages,
        PAGES,
        'every page accepted and settled',
      );
      const records = await readPageRecords(cluster.topic, (r) => distinct(r).size >= PAGES);
      const duplicates = checkDelivery(`crawler kills (${kills})`, records, site);
      assert.ok(duplicates < PAGES * 0.01, `duplicates under 1% (${duplicates})`);
    } finally {
      await cluster.stop();
    }
  });

  test('kill -9 the scheduler twice and restart it: nothing lost', async () => {
    const cluster = await startCluster({ agents: 1, processes: 2 });
    site.resetStats();
    try {
      const run = cluster.crawl(site.url, { hostConcurrency: 32, hostDelayMs: 5 });
      for (const threshold of [300, 900]) {
        await waitFor(() => site.stats().distinctPages >= threshold, {
          timeoutMs: 60_000,
          message: `${threshold} pages fetched`,
        });
        await cluster.killScheduler();
      }
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        (JSON.parse(result.stdout) as { pages: number }).pages,
        PAGES,
        'every page accepted and settled',
      );
      const records = await readPageRecords(cluster.topic, (r) => distinct(r).size >= PAGES);
      checkDelivery('scheduler killed twice', records, site);
    } finally {
      await cluster.stop();
    }
  });

  test('RabbitMQ restarted and Kafka stopped for 20 s: the crawl stalls, then completes, nothing lost', async () => {
    const cluster = await startCluster({ agents: 1, processes: 2 });
    site.resetStats();
    try {
      const run = cluster.crawl(site.url, { hostConcurrency: 32, hostDelayMs: 10 });
      await waitFor(() => site.stats().distinctPages >= 300, {
        timeoutMs: 60_000,
        message: '300 pages fetched',
      });
      try {
        await serviceControl('down', 'rabbitmq');
      } finally {
        await serviceControl('up', 'rabbitmq');
      }
      await waitFor(() => site.stats().distinctPages >= 800, {
        timeoutMs: 120_000,
        message: 'crawl resumed after RabbitMQ',
      });
      try {
        await serviceControl('down', 'kafka');
        const stalledAt = site.stats().distinctPages;
        await new Promise((resolve) => setTimeout(resolve, 20_000));
        assert.ok(site.stats().distinctPages - stalledAt < 1500, 'the crawl stalls without Kafka');
      } finally {
        await serviceControl('up', 'kafka');
      }
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        (JSON.parse(result.stdout) as { pages: number }).pages,
        PAGES,
        'every page accepted and settled',
      );
      const records = await readPageRecords(cluster.topic, (r) => distinct(r).size >= PAGES, 120_000);
      checkDelivery('RabbitMQ restart + Kafka outage', records, site);
    } finally {
      await cluster.stop();
    }
  });
});
