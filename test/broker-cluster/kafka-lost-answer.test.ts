import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import kafkajs from 'kafkajs';
import { KafkaSink } from '../../shared/adapters/page-sink/kafka-sink.js';
import { silentLogger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { startAnswerCuttingRoutes, type AnswerCuttingRoutes } from '../helpers/answer-cutting-proxy.js';
import { deleteTopic, testTopicName } from '../helpers/kafka-topic.js';
import { MemoryBlobStore } from '../helpers/memory-blob-store.js';
import { brokerClusters, KAFKA_CLUSTER_BROKERS } from '../helpers/service-control.js';

const RECORDS = 600;

function admin(): kafkajs.Admin {
  return new kafkajs.Kafka({
    clientId: 'ackcrawl-test-admin',
    brokers: [...KAFKA_CLUSTER_BROKERS],
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin();
}

/** The broker port leading each partition of `topic`. */
async function leaderPorts(topic: string): Promise<number[]> {
  const a = admin();
  await a.connect();
  try {
    const { brokers } = await a.describeCluster();
    const portOf = new Map(brokers.map((b) => [b.nodeId, b.port]));
    const metadata = await a.fetchTopicMetadata({ topics: [topic] });
    return (metadata.topics[0]?.partitions ?? [])
      .sort((x, y) => x.partitionId - y.partitionId)
      .map((p) => portOf.get(p.leader) as number);
  } finally {
    await a.disconnect();
  }
}

/** Records in the topic: the sum of its partitions' high watermarks (a new topic starts at 0). */
async function storedRecords(topic: string): Promise<number> {
  const a = admin();
  await a.connect();
  try {
    const offsets = await a.fetchTopicOffsets(topic);
    return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0);
  } finally {
    await a.disconnect();
  }
}

/**
 * One write spans partitions led by three brokers. One broker stores its part but its answer is
 * lost, and it is out of reach for a moment: the parts the other brokers stored must not be sent
 * again (they would be stored twice, under new sequence numbers), and the lost part, sent again on
 * the same producer, must be recognised by the broker as the copy it has.
 */
describe('a Kafka write across 3 brokers when one loses its answer (replication factor 3)', () => {
  let routes: AnswerCuttingRoutes | undefined;
  const topics: string[] = [];

  before(async () => {
    await brokerClusters.requireUp('kafka');
    routes = await startAnswerCuttingRoutes(KAFKA_CLUSTER_BROKERS);
  });

  after(async () => {
    await routes?.close();
    for (const topic of topics) await deleteTopic(topic, KAFKA_CLUSTER_BROKERS).catch(() => undefined);
  });

  test('every record is stored once: only the failed broker’s partitions go again', async () => {
    assert.ok(routes);
    const topic = testTopicName();
    topics.push(topic);
    const sink = new KafkaSink({
      brokers: KAFKA_CLUSTER_BROKERS,
      topic,
      partitions: 6,
      replicationFactor: 3,
      blobStore: new MemoryBlobStore(),
      socketFactory: routes.socketFactory,
      writeTimeoutMs: 20_000,
      logger: silentLogger(),
    });
    try {
      // A topic just created on 3 brokers is not served by all of them at once: start waits.
      await sink.start();
      const leaders = await leaderPorts(topic);
      assert.equal(leaders.length, 6);
      const distinct = [...new Set(leaders)];
      assert.ok(distinct.length >= 2, `partitions led by several brokers: ${leaders.join(', ')}`);
      const victim = leaders[0] as number;

      const records: SinkRecord[] = Array.from({ length: RECORDS }, (_, i) => ({
        key: `https://lost-answer.test/${i}`,
        value: Buffer.from(JSON.stringify({ url: `https://lost-answer.test/${i}`, pad: 'x'.repeat(200) })),
      }));
      routes.loseNextProduceAnswer(victim, 1_500);
      await sink.write(records);

      assert.equal(routes.lost, 1, 'the broker’s answer to a produce request was lost');
      assert.equal(await storedRecords(topic), RECORDS, 'each record stored once');
    } finally {
      await sink.close();
    }
  });
});
