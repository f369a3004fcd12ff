import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { createKafkaClient, KAFKA_RETRY } from '../../shared/adapters/page-sink/kafka-client.js';
import { ensureTopic } from '../../shared/adapters/page-sink/kafka-topic.js';
import { StorageError } from '../../shared/errors.js';
import { kafkaSsl } from '../../shared/config/tls.js';
import type { Logger } from '../../shared/logger.js';
import type { BlobStore } from '../../shared/ports/blob-store.js';
import type { ArchiverConfig } from './config.js';
import { PartitionArchive } from './partition-archive.js';

export type ArchiverSettings = Pick<
  ArchiverConfig,
  | 'kafkaBrokers'
  | 'kafkaTopic'
  | 'kafkaClientId'
  | 'kafkaTls'
  | 'kafkaPartitions'
  | 'kafkaReplicationFactor'
  | 'archiveJobId'
  | 'archiveGroupId'
  | 'archiveMaxRecords'
  | 'archiveMaxBytes'
  | 'archiveMaxAgeMs'
  | 'archiveSessionTimeoutMs'
  | 'archiveStopTimeoutMs'
>;

export interface ArchiverDeps {
  /** Where archives go; owned (and closed) by the caller. */
  blobStore: BlobStore;
  logger: Logger;
  /** CAs trusted with kafkaTls (shared/config/tls.ts readTlsCa); absent: the system's. */
  ca?: readonly string[] | undefined;
  /** The consumer stopped for good (kafkajs does not restart it); the process should exit. */
  onFatal?: (err: Error) => void;
  /** Backoff of S3 retries (defaults: 200 ms doubling to 10 s). */
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
}

export function createArchiver(settings: ArchiverSettings, deps: ArchiverDeps): Archiver {
  return new Archiver(settings, deps);
}

/**
 * The archiver role: a Kafka consumer in a consumer group that copies the page topic into
 * gzip-compressed JSON-lines objects in S3, one partition's batch per object, and commits a
 * batch's offsets only after its object is stored (at-least-once; see PartitionArchive for how
 * a crash between the two is re-archived under the same name).
 */
export class Archiver {
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly parts = new Map<number, PartitionArchive>();
  private assigned = new Set<number>();
  private consumer: Consumer | null = null;
  private timer: NodeJS.Timeout | null = null;
  private starting: Promise<void> | null = null;
  private stopping = false;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly settings: ArchiverSettings,
    private readonly deps: ArchiverDeps,
  ) {
    const logger = deps.logger.child({ topic: settings.kafkaTopic, groupId: settings.archiveGroupId });
    this.logger = logger.child({ module: 'archiver' });
    this.kafka = createKafkaClient({
      brokers: settings.kafkaBrokers,
      clientId: settings.kafkaClientId,
      ssl: kafkaSsl(settings.kafkaTls, deps.ca),
      logger,
    });
  }

  /** Creates the topic if missing, joins the group and starts consuming. */
  start(): Promise<void> {
    if (this.stopping) return Promise.reject(closedError());
    this.starting ??= this.open();
    return this.starting;
  }

  private async open(): Promise<void> {
    const { kafkaTopic: topic, archiveSessionTimeoutMs: sessionTimeout } = this.settings;
    await ensureTopic(this.kafka, {
      topic,
      partitions: this.settings.kafkaPartitions,
      replicationFactor: this.settings.kafkaReplicationFactor,
    });
    const consumer = this.kafka.consumer({
      groupId: this.settings.archiveGroupId,
      sessionTimeout,
      heartbeatInterval: Math.max(500, Math.floor(sessionTimeout / 10)),
      maxWaitTimeInMs: 1_000,
      retry: KAFKA_RETRY,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) =>
      this.onAssignment(payload.memberAssignment[topic] ?? []),
    );
    consumer.on(consumer.events.REBALANCING, () => this.onRebalancing());
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart) return;
      this.logger.fatal({ err: payload.error }, 'the Kafka consumer stopped');
      this.deps.onFatal?.(payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 4,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    const tickMs = Math.max(20, Math.min(1_000, Math.floor(this.settings.archiveMaxAgeMs / 4)));
    this.timer = setInterval(() => {
      for (const part of this.parts.values()) part.tick();
    }, tickMs);
    this.timer.unref();
    this.logger.info({ jobId: this.settings.archiveJobId }, 'archiver consuming');
  }

  /**
   * Stops taking records, stores every open batch and commits it (within archiveStopTimeoutMs;
   * what is not stored by then is read again by the next run), then leaves the group. Safe to
   * call twice.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    await this.starting?.catch(() => undefined);
    if (this.timer) clearInterval(this.timer);
    const consumer = this.consumer;
    if (!consumer) return;
    // Commits need a running consumer, so it stays in the group until the batches are stored.
    try {
      consumer.pause([{ topic: this.settings.kafkaTopic }]);
    } catch {
      // It never started running: there is nothing to store.
    }
    const parts = [...this.parts.values()];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.settings.archiveStopTimeoutMs);
    });
    const drained = Promise.all(parts.map((part) => part.drain())).then(() => 'drained' as const);
    const outcome = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    if (outcome === 'late') {
      const left = parts.filter((p) => !p.idle).map((p) => p.partition);
      this.logger.error(
        { partitions: left, stopTimeoutMs: this.settings.archiveStopTimeoutMs },
        'batches not stored in time; the next run reads them again from Kafka',
      );
      for (const part of parts) part.abandon('shutdown deadline');
    }
    await consumer.disconnect();
    this.logger.info('archiver stopped');
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, pause, isRunning, isStale } = payload;
    if (this.stopping) return;
    const part = this.partFor(batch.partition);
    part.noteHighWatermark(batch.highWatermark);
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.stopping) return;
      const offer = part.offer(message);
      if (offer === 'busy') {
        part.pauseFetching(pause);
        return;
      }
      resolveOffset(message.offset);
    }
  }

  private partFor(partition: number): PartitionArchive {
    let part = this.parts.get(partition);
    if (!part) {
      const topic = this.settings.kafkaTopic;
      part = new PartitionArchive({
        jobId: this.settings.archiveJobId,
        topic,
        partition,
        maxRecords: this.settings.archiveMaxRecords,
        maxBytes: this.settings.archiveMaxBytes,
        maxAgeMs: this.settings.archiveMaxAgeMs,
        blobStore: this.deps.blobStore,
        commit: (next) => this.commit(partition, next),
        logger: this.logger.child({ partition }),
        retryInitialDelayMs: this.deps.retryInitialDelayMs,
        retryMaxDelayMs: this.deps.retryMaxDelayMs,
      });
      this.parts.set(partition, part);
    }
    return part;
  }

  private async commit(partition: number, next: bigint): Promise<void> {
    const consumer = this.consumer;
    // A partition that went to another member is not committed: its new owner commits it.
    if (!consumer || !this.assigned.has(partition)) {
      throw new StorageError('ARCHIVE_NOT_ASSIGNED', `partition ${partition} is not assigned here`);
    }
    await consumer.commitOffsets([{ topic: this.settings.kafkaTopic, partition, offset: next.toString() }]);
  }

  /** A rebalance is starting: store what is open, so the next owner of a partition need not. */
  private onRebalancing(): void {
    for (const part of this.parts.values()) part.flushNow('rebalance');
  }

  /**
   * After each (re)join. Kafka now refetches every assigned partition from its committed offset:
   * a partition kept here skips what it already took; one that went away is given up.
   */
  private onAssignment(partitions: number[]): void {
    this.assigned = new Set(partitions);
    for (const [partition, part] of this.parts) {
      if (this.assigned.has(partition)) continue;
      part.abandon('partition revoked');
      this.parts.delete(partition);
    }
    this.logger.info({ partitions: [...this.assigned].sort((a, b) => a - b) }, 'partitions assigned');
  }
}

function closedError(): StorageError {
  return new StorageError('ARCHIVER_CLOSED', 'the archiver is closed');
}
