import { randomBytes } from 'node:crypto';
import { connect } from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import {
  allQueueNames,
  DEFAULT_RETRY_DELAY_BUCKETS_MS,
} from '../../shared/adapters/frontier/rabbitmq/topology.js';
import { UrlRotation } from '../../shared/adapters/frontier/rabbitmq/broker-urls.js';

/** The brokers a cluster of this machine uses: the roles' own defaults unless the environment says otherwise. */
const amqpUrls = (): string[] =>
  (process.env.ACKCRAWL_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672').split(/[\s,]+/).filter(Boolean);
const kafkaBrokers = (): string[] =>
  (process.env.ACKCRAWL_KAFKA_BROKERS ?? '127.0.0.1:9092').split(/[\s,]+/).filter(Boolean);

function kafka(): Kafka {
  return new Kafka({ clientId: 'ackcrawl-bench', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
}

export interface TopicCount {
  /** Messages in the topic (at-least-once delivery: may exceed the pages). */
  records: number;
  /** Distinct keys (normalised URLs) read back by a consumer, when asked for. */
  distinctKeys: number | null;
}

/**
 * Counts what a crawl left in its topic: the records from the partition offsets, and, with
 * `readKeys`, the distinct keys read back from the beginning by a consumer in a throwaway group,
 * until `records` messages arrived or `timeoutMs` passed.
 */
export async function countTopic(topic: string, readKeys: boolean, timeoutMs = 120_000): Promise<TopicCount> {
  const client = kafka();
  const admin = client.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const records = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
    if (!readKeys) return { records, distinctKeys: null };
    const groupId = `bench-${randomBytes(4).toString('hex')}`;
    const keys = new Set<string>();
    let received = 0;
    const consumer = client.consumer({ groupId, maxWaitTimeInMs: 100, maxBytes: 50 * 1024 * 1024 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) keys.add(message.key?.toString() ?? '');
          received += batch.messages.length;
        },
      });
      const deadline = Date.now() + timeoutMs;
      while (received < records && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      await consumer.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
    return { records, distinctKeys: keys.size };
  } finally {
    await admin.disconnect();
  }
}

/** Deletes a cluster's queues (missing ones are fine). */
export async function deleteQueues(prefix: string): Promise<void> {
  const model = await new UrlRotation(amqpUrls()).connectAny((url) => connect(url, { timeout: 5_000 }));
  model.on('error', () => undefined);
  try {
    const channel = await model.createChannel();
    for (const queue of allQueueNames(prefix, DEFAULT_RETRY_DELAY_BUCKETS_MS))
      await channel.deleteQueue(queue);
  } finally {
    await model.close();
  }
}

/** Deletes a topic if it exists. */
export async function deleteTopic(topic: string): Promise<void> {
  const admin = kafka().admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(topic)) await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Produces `records` records of `bytes` bytes to a throwaway topic as the page sink does (an
 * idempotent producer, acks: all, 6 partitions), then deletes the topic. Kafka's JVM compiles its
 * produce path over its first few hundred megabytes: on this machine the broker used 9-10 CPU-s
 * for each of three 20,000-page cluster runs after a restart, then 3.0 for the fourth. The site is
 * warmed for the same reason (warm-site.ts). Returns the seconds it took.
 */
export async function warmKafka(records: number, bytes: number): Promise<number> {
  const client = kafka();
  const topic = `ackcrawl-bench-warm-up-${randomBytes(4).toString('hex')}`;
  const admin = client.admin();
  await admin.connect();
  const started = Date.now();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const value = randomBytes(bytes);
      // About 40 records per partition a send: a partition's batch stays under the broker's 1 MiB.
      const perSend = 240;
      for (let sent = 0; sent < records; sent += perSend) {
        const n = Math.min(perSend, records - sent);
        const messages = Array.from({ length: n }, (_, i) => ({ key: `warm-up-${sent + i}`, value }));
        await producer.send({ topic, acks: -1, messages });
      }
    } finally {
      await producer.disconnect();
    }
    return (Date.now() - started) / 1000;
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}
