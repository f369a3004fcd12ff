import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { logLines, type LogLine } from '../helpers/log-lines.js';
import { fillDisk, freeDisk, mountTmpfs } from '../helpers/tmpfs.js';
import { expectWholeCrawl } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 1_500;
const MiB = 1024 * 1024;

/**
 * The cluster scheduler's own disk is its ledger (RabbitMQ holds the work, Kafka the records). When
 * that disk fills, settles fail before their acks: the crawl must stall with a message naming the
 * file, keep every delivery unacknowledged, and go on once space is freed, losing nothing.
 */
describe('a full disk under the cluster scheduler (its ledger on a real tmpfs)', () => {
  const root = mkdtempSync(join(tmpdir(), 'ackcrawl-ledger-full-'));
  let site: GeneratedSite;
  let cluster: Cluster;
  let disk: ReturnType<typeof mountTmpfs>;
  before(async () => {
    site = await startGeneratedSite({ pages: PAGES });
    disk = mountTmpfs(join(root, 'scheduler'), 16 * MiB);
    cluster = await startCluster({
      agents: 1,
      processes: 2,
      schedulerDataDir: disk.dir,
      captureSchedulerLog: true,
      env: { ACKCRAWL_LOG_LEVEL: 'warn' },
    });
  });
  after(async () => {
    await cluster.stop();
    disk.unmount();
    await site.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('settles stall with a message naming the ledger, resume once space is freed, every page arrives', async () => {
    // Room for a few hundred settles of the ledger's write-ahead log: the crawl must hit the wall.
    const filler = fillDisk(disk.dir, 256 * 1024);
    const run = cluster.crawl(site.url, { hostConcurrency: 16, hostDelayMs: 0 });
    const stalls = (): LogLine[] =>
      logLines(cluster.schedulerLog()).filter(
        (l) => l.code === 'FRONTIER_DISK_FULL' && l.msg?.startsWith('outcomes cannot be made durable'),
      );
    await waitFor(() => stalls().length > 0, {
      timeoutMs: 60_000,
      message: `a disk-full stall reported; scheduler log so far: ${cluster.schedulerLog().slice(-2000)}`,
    });
    const [first] = stalls();
    assert.ok(first?.msg?.includes(disk.dir), `the message names the ledger's file: ${first?.msg}`);
    const stalledAt = site.stats().distinctPages;
    assert.ok(stalledAt < PAGES, `stalled mid-crawl (${stalledAt} pages fetched)`);

    // Stalled, not dead: the scheduler waits for space, and the crawl does not end.
    const watchUntil = Date.now() + 3_000;
    await waitFor(() => Date.now() >= watchUntil || cluster.scheduler().exitCode !== null, {
      timeoutMs: 10_000,
    });
    assert.equal(cluster.scheduler().exitCode, null, 'the scheduler waits for space instead of exiting');
    assert.equal(run.child.exitCode, null, 'the crawl is not over');

    freeDisk(filler);
    const freedAt = Date.now();
    await waitFor(() => logLines(cluster.schedulerLog()).some((l) => /durable again/.test(l.msg ?? '')), {
      timeoutMs: 60_000,
      message: 'the end of the stall reported',
    });
    const resumedMs = Date.now() - freedAt;
    const { records, duplicates } = await expectWholeCrawl(run, cluster.topic, PAGES);
    console.log(
      `# ledger disk full: stalled at ${stalledAt} pages, resumed ${resumedMs} ms after space was freed; ` +
        `${records.length} records for ${PAGES} pages, ${duplicates} duplicates, ` +
        `${site.stats().pageResponses - PAGES} pages fetched twice`,
    );
    assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
  });
});
