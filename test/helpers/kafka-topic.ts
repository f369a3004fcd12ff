import { randomUUID } from 'node:crypto';
import kafkajs, { Kafka, logLevel } from 'kafkajs';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { kafkaSettings } from './services.js';

export function testTopicName(): string {
  return `test-${randomUUID()}`;
}

function testKafka(brokers: readonly string[] = kafkaSettings.kafkaBrokers): Kafka {
  return new Kafka({
    clientId: 'ackcrawl-test',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
}

/**
 * Reads `topic` from the beginning with a fresh consumer group until at least `count` messages
 * arrived (then a little longer, to catch extra ones), and returns them partition by partition in
 * offset order, which is the order per key. The group is deleted afterwards.
 */
export async function readTopic(topic: string, count: number, timeoutMs = 30_000): Promise<SinkRecord[]> {
  const kafka = testKafka();
  const groupId = `test-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  const byPartition = new Map<number, { offset: bigint; record: SinkRecord }[]>();
  let received = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const list = byPartition.get(partition) ?? [];
        list.push({
          offset: BigInt(message.offset),
          record: { key: message.key?.toString() ?? '', value: message.value ?? Buffer.alloc(0) },
        });
        byPartition.set(partition, list);
        received += 1;
      },
    });
    const deadline = Date.now() + timeoutMs;
    while (received < count && Date.now() < deadline) await sleep(50);
    await sleep(count === 0 ? 2_000 : 300);
  } finally {
    await consumer.disconnect();
  }
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([groupId]).catch(() => undefined);
  await admin.disconnect();
  return [...byPartition.keys()]
    .sort((a, b) => a - b)
    .flatMap((p) =>
      (byPartition.get(p) ?? []).sort((a, b) => (a.offset < b.offset ? -1 : 1)).map((m) => m.record),
    );
}

/** A topic read from the beginning as records arrive, for tests that poll what has been written. */
export interface TopicTail {
  /** Every message received so far, in arrival order. */
  readonly records: readonly SinkRecord[];
  close(): Promise<void>;
}

/**
 * Follows `topic` from its beginning with a fresh consumer group, once the topic exists (waits
 * for it up to `timeoutMs`). The group is deleted on close().
 */
export async function tailTopic(topic: string, timeoutMs = 30_000): Promise<TopicTail> {
  const kafka = testKafka();
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (!(await admin.listTopics()).includes(topic)) {
      if (Date.now() > deadline) throw new Error(`topic ${topic} did not appear in ${timeoutMs} ms`);
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
  const groupId = `test-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  const records: SinkRecord[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      records.push({ key: message.key?.toString() ?? '', value: message.value ?? Buffer.alloc(0) });
    },
  });
  return {
    records,
    close: async () => {
      await consumer.disconnect();
      const cleanup = kafka.admin();
      await cleanup.connect();
      await cleanup.deleteGroups([groupId]).catch(() => undefined);
      await cleanup.disconnect();
    },
  };
}

export async function topicPartitions(topic: string): Promise<number> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** One configuration entry of a topic, as the broker describes it. */
export async function topicConfig(
  topic: string,
  name: string,
  brokers?: readonly string[],
): Promise<{ value: string; isDefault: boolean } | null> {
  const admin = testKafka(brokers).admin();
  await admin.connect();
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }],
    });
    const entry = described.resources[0]?.configEntries.find((e) => e.configName === name);
    return entry ? { value: entry.configValue, isDefault: entry.isDefault } : null;
  } finally {
    await admin.disconnect();
  }
}

/** Deletes `topic` if it exists, on the brokers of ACKCRAWL_KAFKA_BROKERS unless given. */
export async function deleteTopic(topic: string, brokers?: readonly string[]): Promise<void> {
  const admin = testKafka(brokers).admin();
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(topic)) await admin.deleteTopics({ topics: [topic] });
  } finally {
    await admin.disconnect();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
