import { KafkaSink } from '../adapters/page-sink/kafka-sink.js';
import type { PublishTimer } from '../metrics/publish-latency.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Logger } from '../logger.js';
import type { KafkaSettings } from './kafka-settings.js';
import { kafkaSsl } from './tls.js';

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
    compression: settings.kafkaCompression,
    ssl: kafkaSsl(settings.kafkaTls, deps.ca),
    blobStore: deps.blobStore,
    logger: deps.logger,
    ...(deps.publishTimer ? { publishTimer: deps.publishTimer } : {}),
  });
}
