import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { restoreClaimChecks } from '../../shared/adapters/page-sink/claim-check-restore.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { storedPageRecordSchema, type StoredPageRecord } from '../../shared/protocol/page-record.js';
import { startLargeSitemapSite, type LargeSitemapSite } from '../fixtures/large-sitemap-site.js';
import { startCli } from '../helpers/cli.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { s3Settings } from '../helpers/services.js';
import { readPageRecords } from '../helpers/topic-records.js';

const ENTRIES = Number(process.env.ACKCRAWL_TEST_SITEMAP_ENTRIES ?? 50_000);

describe('a large sitemap in Kafka mode', () => {
  let site: LargeSitemapSite;
  let cluster: Cluster;
  before(async () => {
    site = await startLargeSitemapSite({ entries: ENTRIES });
    cluster = await startCluster({ agents: 1, processes: 2 });
  });
  after(async () => {
    await cluster.stop();
    await site.close();
  });

  test(`a ${ENTRIES}-URL sitemap queues, and the crawl fetches, every URL it lists`, async () => {
    const started = Date.now();
    const run = startCli(
      [
        'crawl',
        '--cluster',
        site.url,
        '--allow-private',
        '--sitemaps',
        '--host-delay',
        '0',
        '--host-concurrency',
        '32',
        '--json',
      ],
      cluster.env,
    );
    cluster.onStop(() => {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr.slice(-3000));
    const summary = JSON.parse(result.stdout) as { pages: number; ok: number };
    // The home page, the sitemap, and every page it lists.
    assert.equal(summary.pages, ENTRIES + 2, 'every entry was accepted and settled');
    assert.equal(summary.ok, ENTRIES + 2);
    assert.equal(site.pagesServed(), ENTRIES, 'every listed page was fetched');
    assert.equal(site.sitemapRequests(), 1);

    const records = (await readPageRecords(
      cluster.topic,
      (r) => new Set(r.map((x) => x.url)).size >= ENTRIES + 2,
      120_000,
    )) as unknown as StoredPageRecord[];
    const urls = new Set(records.map((r) => r.url));
    for (const entry of site.entries) assert.ok(urls.has(entry), `${entry} in Kafka`);
    const sitemap = storedPageRecordSchema.parse(records.find((r) => r.url === `${site.origin}/sitemap.xml`));
    assert.equal(sitemap.outcome, 'ok');
    if (ENTRIES >= 20_000) {
      // Over the claim check's threshold (512 KiB) and Kafka's limit (1 MB) by far.
      assert.equal(sitemap.links, null, 'its links went to the blob store');
      assert.equal(sitemap.linksRef?.links, ENTRIES);
      assert.equal(sitemap.body, null, 'and its body');
    }
    const blobStore = createMinioBlobStore(s3Settings);
    try {
      const whole = storedPageRecordSchema.parse(
        JSON.parse(
          (await restoreClaimChecks(Buffer.from(JSON.stringify(sitemap)), blobStore)).toString('utf8'),
        ),
      );
      assert.deepEqual(whole.links, site.entries, 'a consumer gets the full list back');
    } finally {
      await blobStore.close();
    }
    const page = records.find((r) => r.url === site.entries[7]);
    assert.equal(page?.lastmod, '2026-01-08');
    assert.equal(page?.parentUrl, `${site.origin}/sitemap.xml`);
    console.log(
      `# ${ENTRIES}-URL sitemap: ${records.length} records for ${urls.size} URLs in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
