import kafkajs, { type Kafka } from 'kafkajs';
import type { Logger } from '../../logger.js';
import { isTopicNotReady } from './kafka-errors.js';

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
}

/**
 * `min.insync.replicas` for a topic of `replicationFactor` replicas: all but one, at least one. So
 * `acks: all` means "on every replica but one": one broker may be down without stopping writes,
 * and a confirmed record is on two brokers whenever there are two or more.
 */
export function minInsyncReplicasFor(replicationFactor: number): number {
  return Math.max(1, replicationFactor - 1);
}

/** The topic configuration this sink creates a topic with. */
export function topicConfigEntries(replicationFactor: number): { name: string; value: string }[] {
  return [{ name: 'min.insync.replicas', value: String(minInsyncReplicasFor(replicationFactor)) }];
}

export interface TopicDurability {
  /** Replicas of the topic's least replicated partition. */
  replicationFactor: number;
  /** Its `min.insync.replicas` (the broker's default when the topic sets none); null if unknown. */
  minInsyncReplicas: number | null;
}

/**
 * What makes `acks: all` weaker on an existing topic than on one this sink would create with
 * `wanted` replicas; empty when nothing does.
 */
export function durabilityProblems(actual: TopicDurability, wanted: number): string[] {
  const problems: string[] = [];
  if (actual.replicationFactor < wanted) {
    problems.push(`it has ${actual.replicationFactor} replicas where ${wanted} are configured`);
  }
  const want = minInsyncReplicasFor(actual.replicationFactor);
  if (actual.minInsyncReplicas !== null && actual.minInsyncReplicas < want) {
    problems.push(
      `min.insync.replicas is ${actual.minInsyncReplicas} for ${actual.replicationFactor} replicas ` +
        `(${want} would keep a confirmed record on all replicas but one)`,
    );
  }
  return problems;
}

/**
 * Creates the topic if it is missing, with `min.insync.replicas` of all replicas but one, and returns
 * its partition count. An existing topic is used as it is; a weaker durability than this sink would
 * create is logged as a warning (it is the operator's to change, with kafka-configs.sh).
 */
export async function ensureTopic(kafka: Kafka, spec: TopicSpec, logger?: Logger): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    const created = !existing.includes(spec.topic);
    if (created) {
      // kafkajs waits for the new partitions' leaders, but fails when the broker it asks does not
      // know the topic yet (several brokers): it is created then, and waited for just below.
      await admin
        .createTopics({
          waitForLeaders: true,
          topics: [
            {
              topic: spec.topic,
              numPartitions: spec.partitions,
              replicationFactor: spec.replicationFactor,
              configEntries: topicConfigEntries(spec.replicationFactor),
            },
          ],
        })
        .catch((err: unknown) => {
          if (!isTopicNotReady(err)) throw err;
        });
    }
    const metadata = await untilTopicServed(() => admin.fetchTopicMetadata({ topics: [spec.topic] }));
    const partitions = metadata.topics[0]?.partitions ?? [];
    if (!created && logger && partitions.length > 0) {
      const replicationFactor = Math.min(...partitions.map((p) => p.replicas.length));
      const minInsyncReplicas = await readMinInsyncReplicas(admin, spec.topic).catch(() => null);
      const problems = durabilityProblems({ replicationFactor, minInsyncReplicas }, spec.replicationFactor);
      if (problems.length > 0) {
        logger.warn(
          { replicationFactor, minInsyncReplicas, problems },
          `topic ${spec.topic} is less durable than configured: ${problems.join('; ')}`,
        );
      }
    }
    return partitions.length || spec.partitions;
  } finally {
    await admin.disconnect();
  }
}

/**
 * `read`, asked again while it fails because a broker does not serve the topic yet (one just
 * created on several brokers reaches them one by one), for up to `timeoutMs`.
 */
export async function untilTopicServed<T>(read: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let waitMs = 100; ; waitMs = Math.min(waitMs * 2, 1_000)) {
    try {
      return await read();
    } catch (err) {
      if (!isTopicNotReady(err) || Date.now() + waitMs > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

// Not a named export the ESM loader can see in kafkajs's CommonJS.
const { ConfigResourceTypes } = kafkajs;

async function readMinInsyncReplicas(
  admin: ReturnType<Kafka['admin']>,
  topic: string,
): Promise<number | null> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }],
  });
  const entry = described.resources[0]?.configEntries.find((e) => e.configName === 'min.insync.replicas');
  const value = Number(entry?.configValue);
  return Number.isInteger(value) ? value : null;
}
