import type { Kafka } from 'kafkajs';

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
}

/**
 * Creates the topic if it is missing and returns its partition count (an existing topic is used as
 * it is). With three or more replicas, `min.insync.replicas=2` makes `acks: all` mean "on two
 * brokers at least"; with fewer, the broker default stands.
 */
export async function ensureTopic(kafka: Kafka, spec: TopicSpec): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    if (!existing.includes(spec.topic)) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic: spec.topic,
            numPartitions: spec.partitions,
            replicationFactor: spec.replicationFactor,
            configEntries: spec.replicationFactor >= 3 ? [{ name: 'min.insync.replicas', value: '2' }] : [],
          },
        ],
      });
    }
    const metadata = await admin.fetchTopicMetadata({ topics: [spec.topic] });
    return metadata.topics[0]?.partitions.length ?? spec.partitions;
  } finally {
    await admin.disconnect();
  }
}
