import { z } from 'zod';
import { field } from './load.js';
import { KafkaSink } from '../adapters/page-sink/kafka-sink.js';
import type { Logger } from '../logger.js';
import { kafkaSsl } from './tls.js';
import type { BlobStore } from '../ports/blob-store.js';

/**
 * The Kafka page stream in the distributed setup. Each key is also an environment variable:
 * `kafkaBrokers` → ACKCRAWL_KAFKA_BROKERS (a list: spaces or commas). Defaults point at the Kafka
 * that scripts/services.sh starts. Role schemas spread these fields:
 * `z.object({ ...kafkaSettingsSchema.shape })`.
 */
import type { PublishTimer } from '../metrics/publish-latency.js';
export const kafkaSettingsSchema = z.object({
  kafkaBrokers: field
    .list()
    .pipe(z.array(z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'host:port')).min(1))
    .default(['127.0.0.1:9092']),
  kafkaTopic: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,249}$/, 'a Kafka topic name: letters, digits, dots, underscores, dashes')
    .default('ackcrawl.pages'),
  kafkaClientId: z.string().min(1).default('ackcrawl'),
  /** Used when the topic is created (an existing topic is used as it is). */
  kafkaPartitions: field.int(1).default(6),
  kafkaReplicationFactor: field.int(1).default(1),
  /** Records larger than this have their body moved to S3 (the claim check). */
  kafkaBodyThresholdBytes: field.int(1024).default(512 * 1024),
  kafkaWriteTimeoutMs: field.int(1000).default(30_000),
  /** TLS to the brokers (verified; CAs of ACKCRAWL_TLS_CA besides the system's: docs/tls.md). */
  kafkaTls: field.bool().default(false),
});

export type KafkaSettings = z.infer<typeof kafkaSettingsSchema>;

export interface KafkaSinkDeps {
  logger: Logger;
  /** Where large bodies go; owned (and closed) by the caller. */
  blobStore: BlobStore;
  /** CAs trusted with kafkaTls (shared/config/tls.ts readTlsCa); absent: the system's. */
  ca?: readonly string[] | undefined;
  /** Times each producer send (shared/metrics/publish-latency.ts); absent: not timed. */
  publishTimer?: PublishTimer;
}

export function createKafkaSink(settings: KafkaSettings, deps: KafkaSinkDeps): KafkaSink {
  return new KafkaSink({
    brokers: settings.kafkaBrokers,
    topic: settings.kafkaTopic,
    clientId: settings.kafkaClientId,
    partitions: settings.kafkaPartitions,
    replicationFactor: settings.kafkaReplicationFactor,
    bodyThresholdBytes: settings.kafkaBodyThresholdBytes,
    writeTimeoutMs: settings.kafkaWriteTimeoutMs,
    ssl: kafkaSsl(settings.kafkaTls, deps.ca),
    blobStore: deps.blobStore,
    logger: deps.logger,
    ...(deps.publishTimer ? { publishTimer: deps.publishTimer } : {}),
  });
}
