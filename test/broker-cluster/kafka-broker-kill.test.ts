import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import kafkajs from 'kafkajs';
import { brokerClusters, KAFKA_CLUSTER_BROKERS, type ClusterNode } from '../helpers/service-control.js';
import { topicConfig } from '../helpers/kafka-topic.js';
import { waitFor } from '../helpers/wait-for.js';
import { crawlThroughFault, PAGES } from './fault-kit.js';

/** The page topic's partitions: leader and replicas (broker ids, which are the nodes' numbers). */
async function partitions(topic: string): Promise<{ leader: number; replicas: number[]; isr: number[] }[]> {
  const kafka = new kafkajs.Kafka({
    clientId: 'ackcrawl-test-metadata',
    brokers: [...KAFKA_CLUSTER_BROKERS],
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return (metadata.topics[0]?.partitions ?? []).map((p) => ({
      leader: p.leader,
      replicas: p.replicas,
      isr: p.isr,
    }));
  } finally {
    await admin.disconnect();
  }
}

describe(`a ${PAGES}-page cluster crawl on 3 Kafka brokers (replication factor 3, min.insync.replicas 2)`, () => {
  before(async () => {
    await brokerClusters.requireUp('rabbitmq', 'kafka');
  });

  test('kill -9 the broker leading most page partitions mid-crawl: nothing lost, duplicates under 0.5%, no restart', async () => {
    await crawlThroughFault(
      'Kafka partition leader killed',
      async ({ cluster }) => {
        const parts = await partitions(cluster.topic);
        assert.ok(parts.length > 0, `topic ${cluster.topic} exists`);
        for (const p of parts) assert.equal(p.replicas.length, 3, 'every partition on 3 brokers');
        assert.equal(
          (await topicConfig(cluster.topic, 'min.insync.replicas', KAFKA_CLUSTER_BROKERS))?.value,
          '2',
        );
        const counts = new Map<number, number>();
        for (const p of parts) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
        const [leader, led] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
        assert.ok(
          leader !== undefined && leader >= 1 && leader <= 3,
          `a leader among ${JSON.stringify(parts)}`,
        );
        const node = `kafka-${leader}` as ClusterNode;
        const pid = await brokerClusters.pid(node);
        const killedAt = Date.now();
        process.kill(pid, 'SIGKILL');
        // The controllers fence the dead broker and its partitions get leaders among the two left.
        await waitFor(async () => (await partitions(cluster.topic)).every((p) => p.leader !== leader), {
          timeoutMs: 60_000,
          intervalMs: 500,
          message: `every partition led by a broker other than ${leader}`,
        });
        const movedMs = Date.now() - killedAt;
        return (
          `broker ${leader} (pid ${pid}, leader of ${led} of ${parts.length} partitions) killed, ` +
          `its partitions led by others ${(movedMs / 1000).toFixed(1)} s later`
        );
      },
      () => brokerClusters.up('kafka'),
    );
  });
});
