import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import type { CrawlStatus } from '../../shared/protocol/crawl-api.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { rawMinioClient, removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { serviceControl } from '../helpers/service-control.js';
import { requireMinio } from '../helpers/services.js';
import { expectWholeCrawl } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 300;
/** Over the 512 KiB claim-check threshold: every body goes to MinIO. */
const PAGE_BYTES = 600_000;
const OUTAGE_MS = 60_000;

/** Resident memory of a process, from /proc (0 once it is gone). */
function rssBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

interface Status {
  status: CrawlStatus['status'];
  done: number;
  failed: number;
}

async function crawlStatus(cluster: Cluster): Promise<Status> {
  const api = cluster.schedulerUrl.replace(/^ws:/, 'http:').replace(/\/crawlers$/, '/crawl');
  const res = await fetch(api, { headers: { authorization: `Bearer ${cluster.token}` } });
  const body = (await res.json()) as CrawlStatus;
  return { status: body.status, done: body.progress.done ?? 0, failed: body.progress.failed ?? 0 };
}

async function objectSha256(bucket: string, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await rawMinioClient().getObject(bucket, key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

describe('a MinIO outage during a cluster crawl of large pages', () => {
  let site: GeneratedSite;
  before(async () => {
    await requireMinio();
    site = await startGeneratedSite({ pages: PAGES, pageBytes: PAGE_BYTES });
  });
  after(async () => {
    await site.close();
  });

  test('MinIO down for 60 s: the crawl stalls in bounded memory, then completes; no record points at a missing body', async () => {
    const bucket = testBucketName();
    const cluster = await startCluster({ agents: 1, processes: 2, env: { ACKCRAWL_S3_BUCKET: bucket } });
    let minioDown = false;
    try {
      const run = cluster.crawl(site.url, { hostConcurrency: 4, hostDelayMs: 20 });
      await waitFor(async () => (await crawlStatus(cluster)).done >= 40, {
        timeoutMs: 120_000,
        message: '40 pages settled before the outage',
      });

      await serviceControl('down', 'minio');
      minioDown = true;
      const downAt = Date.now();
      const scheduler = cluster.scheduler().pid;
      let peakScheduler = 0;
      let peakTree = 0;
      const sample = (): void => {
        const schedulerRss = rssBytes(scheduler);
        peakScheduler = Math.max(peakScheduler, schedulerRss);
        peakTree = Math.max(peakTree, schedulerRss + cluster.crawlers().reduce((s, p) => s + rssBytes(p), 0));
      };
      // Outcomes in flight when MinIO went settle or fail within a few seconds; then nothing may.
      await waitFor(() => Date.now() - downAt >= 10_000, { timeoutMs: 15_000, intervalMs: 250 });
      const doneEarly = (await crawlStatus(cluster)).done;
      const fetchedEarly = site.stats().distinctPages;
      await waitFor(
        () => {
          sample();
          return Date.now() - downAt >= OUTAGE_MS;
        },
        { timeoutMs: OUTAGE_MS + 10_000, intervalMs: 500 },
      );
      const during = await crawlStatus(cluster);
      const fetchedLate = site.stats().distinctPages;
      console.log(
        `# MinIO outage: ${during.done} settled, ${fetchedLate} fetched at its end; scheduler RSS peak ${Math.round(peakScheduler / 1024 / 1024)} MiB, scheduler + crawlers ${Math.round(peakTree / 1024 / 1024)} MiB`,
      );
      assert.equal(during.done, doneEarly, 'nothing settles while bodies cannot be stored');
      assert.equal(during.failed, 0, 'no page failed for want of MinIO');
      assert.equal(during.status, 'crawling');
      assert.ok(fetchedLate < PAGES, 'the crawl stalled instead of fetching everything into memory');
      assert.equal(fetchedLate, fetchedEarly, 'dispatch stopped once the backlog reached its bound');
      assert.ok(peakScheduler < 300 * 1024 * 1024, `scheduler memory stays bounded (${peakScheduler} bytes)`);

      await serviceControl('up', 'minio');
      minioDown = false;
      const upAt = Date.now();
      await waitFor(async () => (await crawlStatus(cluster)).done > doneEarly, {
        timeoutMs: 60_000,
        message: 'the crawl resumed after MinIO came back',
      });
      const resumedMs = Date.now() - upAt;
      const { records, duplicates } = await expectWholeCrawl(run, cluster.topic, PAGES);
      const checked = new Map<string, string>();
      for (const record of records) {
        assert.equal(record.outcome, 'ok', `${record.url}: ok`);
        assert.equal(record.body, null, `${record.url}: body moved out`);
        const ref = record.bodyRef;
        assert.ok(ref, `${record.url}: has a bodyRef`);
        assert.equal(ref.bucket, bucket);
        assert.equal(ref.sha256, record.bodySha256, `${record.url}: the ref is the page's body`);
        const sha = checked.get(ref.key) ?? (await objectSha256(bucket, ref.key));
        checked.set(ref.key, sha);
        assert.equal(sha, ref.sha256, `${record.url}: the stored body matches its sha256`);
      }
      console.log(
        `# MinIO outage: ${records.length} records for ${PAGES} pages, ${duplicates} duplicates (${((duplicates / PAGES) * 100).toFixed(2)}%), ${checked.size} bodies checked, resumed ${resumedMs} ms after MinIO answered`,
      );
      assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
    } finally {
      if (minioDown) await serviceControl('up', 'minio');
      await cluster.stop();
      await removeBucket(bucket);
    }
  });
});
