import assert from 'node:assert/strict';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { startCluster, type Cluster, type ClusterBrokers } from '../helpers/cluster.js';
import { KAFKA_CLUSTER_BROKERS, RABBITMQ_CLUSTER_URLS } from '../helpers/service-control.js';
import { readDistinctPages } from '../helpers/topic-records.js';
import { waitFor } from '../helpers/wait-for.js';

/** Pages of each fault test's crawl (ACKCRAWL_TEST_CLUSTER_PAGES to change). */
export const PAGES = Number(process.env.ACKCRAWL_TEST_CLUSTER_PAGES ?? 2000);
/** The fault strikes once the site served this share of the pages. */
const FAULT_AT = 0.3;
/** Duplicates allowed, as a share of the pages. */
const MAX_DUPLICATES = 0.005;

/** Both broker clusters of `scripts/services.sh cluster-up`: the deployment the issue asks about. */
export const CLUSTER_BROKERS: ClusterBrokers = {
  amqpUrls: RABBITMQ_CLUSTER_URLS,
  kafkaBrokers: KAFKA_CLUSTER_BROKERS,
  kafkaReplicationFactor: 3,
};

/** Every ackcrawl process of the cluster, to show that none was restarted. */
interface Pids {
  scheduler: number;
  agents: number[];
  crawlers: number[];
}

function pidsOf(cluster: Cluster): Pids {
  return {
    scheduler: cluster.scheduler().pid as number,
    agents: [...cluster.agents()].sort((a, b) => a - b),
    crawlers: [...cluster.crawlers()].sort((a, b) => a - b),
  };
}

export interface FaultRun {
  site: GeneratedSite;
  cluster: Cluster;
}

/**
 * A cluster crawl of PAGES pages on both broker clusters (1 agent × 2 crawlers, one scheduler),
 * with `fault` struck once FAULT_AT of the pages were served, and `repair` (bringing the broker
 * node back) once the crawl ended, whatever happened. Checks: the crawl finishes by itself (after
 * going on past the fault), every page is in Kafka exactly ok, 0 lost, duplicates counted, printed
 * and under MAX_DUPLICATES, and every ackcrawl process is the one that started (no restart).
 */
export async function crawlThroughFault(
  name: string,
  fault: (run: FaultRun) => Promise<string>,
  repair: () => Promise<void>,
): Promise<void> {
  const site = await startGeneratedSite({ pages: PAGES });
  let cluster: Cluster | null = null;
  let repaired = false;
  try {
    cluster = await startCluster({ agents: 1, processes: 2, brokers: CLUSTER_BROKERS });
    const started = Date.now();
    const before = pidsOf(cluster);
    const run = cluster.crawl(site.url, { hostConcurrency: 16, hostDelayMs: 15 });
    await waitFor(() => site.stats().distinctPages >= PAGES * FAULT_AT, {
      timeoutMs: 120_000,
      message: () => `${FAULT_AT * 100}% of the pages fetched (${site.stats().distinctPages})`,
    });
    const faultAt = site.stats().distinctPages;
    const what = await fault({ site, cluster });
    const afterFault = site.stats().distinctPages;
    // The crawl goes on: pages the fault did not let through come after it, by the same processes.
    await waitFor(() => site.stats().distinctPages >= Math.min(PAGES, afterFault + PAGES * 0.2), {
      timeoutMs: 120_000,
      message: () => `the crawl going on after: ${what} (${site.stats().distinctPages} pages fetched)`,
    });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr.slice(-3000));
    assert.equal(
      (JSON.parse(result.stdout) as { pages: number }).pages,
      PAGES,
      'every page accepted and settled',
    );
    assert.deepEqual(pidsOf(cluster), before, 'no ackcrawl process was restarted');
    assert.equal(cluster.scheduler().exitCode, null, 'the scheduler still runs');

    const records = await readDistinctPages(cluster.topic, PAGES, 120_000, CLUSTER_BROKERS.kafkaBrokers);
    const duplicates = checkDelivery(records);
    const later = records.filter((r) => r.attempt > 1).length;
    console.log(
      `# ${name} (${what}, at ${faultAt} pages): ${records.length} records for ${PAGES} pages, ` +
        `${duplicates} duplicates (${((duplicates / PAGES) * 100).toFixed(2)}%), ` +
        `site served ${site.stats().pageResponses}, ${later} on a later attempt, ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    assert.ok(
      duplicates < PAGES * MAX_DUPLICATES,
      `duplicates under ${MAX_DUPLICATES * 100}% (${duplicates})`,
    );
    repaired = true;
    await repair();
  } finally {
    if (!repaired) await repair().catch((err: unknown) => console.error('# could not repair:', err));
    await cluster?.stop();
    await site.close();
  }
}

/** Every page at least once and ok; the duplicates. */
function checkDelivery(records: PageRecord[]): number {
  const urls = new Set(records.map((r) => r.url));
  assert.equal(urls.size, PAGES, 'every page in Kafka: none lost');
  assert.ok(
    records.every((r) => r.outcome === 'ok'),
    'every page ok',
  );
  return records.length - urls.size;
}
