import { z } from 'zod';
import { KAFKA_COMPRESSIONS } from '../adapters/page-sink/kafka-compression.js';
import { field } from './load.js';

/**
 * The Kafka page stream in the distributed setup. Each key is also an environment variable:
 * `kafkaBrokers` → ACKCRAWL_KAFKA_BROKERS (a list: spaces or commas). Defaults point at the Kafka
 * that scripts/services.sh starts. Role schemas spread these fields:
 * `z.object({ ...kafkaSettingsSchema.shape })`. The sink itself is made by kafka-sink-factory.ts, so
 * reading the settings never loads kafkajs.
 */
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
  /**
   * Record batches gzipped (level 1) by the producer: about a fifth of the bytes on the network and
   * on the brokers' disks, for about as much CPU on the producing scheduler's thread pool (docs/capacity.md).
   */
  kafkaCompression: z.enum(KAFKA_COMPRESSIONS).default('none'),
  /** TLS to the brokers (verified; CAs of ACKCRAWL_TLS_CA besides the system's: docs/tls.md). */
  kafkaTls: field.bool().default(false),
});

export type KafkaSettings = z.infer<typeof kafkaSettingsSchema>;
