import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../../shared/logger.js';
import { KAFKA_RETRY } from '../../shared/adapters/page-sink/kafka-client.js';
import type { BatchCleaner, ReadRecord } from './batch-cleaner.js';

export interface KafkaExtractOptions {
  kafka: Kafka;
  topic: string;
  groupId: string;
  cleaner: BatchCleaner;
  logger: Logger;
  /** Records cleaned and committed together (one SQL transaction each, then one offset commit). */
  chunkRecords: number;
  /**
   * What one fetch may bring per partition and in all: the consumer's memory is this plus one
   * chunk's claim-checked bodies, whatever the topic's size.
   */
  maxBytesPerPartition: number;
  maxBytes: number;
  /** Start a new group at the topic's beginning (true) or its end. */
  fromBeginning: boolean;
}

/**
 * `ackcrawl extract` on Kafka: a consumer group on the page topic. Offsets are committed by hand
 * (autoCommit off), per chunk, and only after the chunk's rows are committed in SQL: a crash or a
 * rebalance at any point leads to records read again, never to records skipped, and reading one
 * again rewrites the same rows (idempotent on the capture id). A chunk that SQL or the blob store
 * refuses for a reason that may pass makes eachBatch throw: kafkajs retries it, then restarts the
 * consumer from the committed offset.
 */
export class KafkaExtractConsumer {
  private readonly consumer: Consumer;
  private closing: Promise<void> | null = null;

  constructor(private readonly o: KafkaExtractOptions) {
    this.consumer = o.kafka.consumer({
      groupId: o.groupId,
      allowAutoTopicCreation: false,
      maxBytesPerPartition: o.maxBytesPerPartition,
      maxBytes: o.maxBytes,
      maxWaitTimeInMs: 500,
      retry: { ...KAFKA_RETRY, restartOnFailure: async () => this.closing === null },
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.o.topic], fromBeginning: this.o.fromBeginning });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    this.o.logger.info({ topic: this.o.topic, groupId: this.o.groupId }, 'extract consumer running');
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const messages = batch.messages;
    for (let start = 0; start < messages.length; start += this.o.chunkRecords) {
      if (!payload.isRunning() || payload.isStale()) return;
      const chunk = messages.slice(start, start + this.o.chunkRecords);
      const records: ReadRecord[] = [];
      for (const m of chunk) {
        if (m.value === null) continue; // a tombstone: nothing to clean
        records.push({ value: m.value, source: `kafka:${batch.topic}:${batch.partition}:${m.offset}` });
      }
      await this.o.cleaner.cleanAndCommit(records);
      const last = chunk[chunk.length - 1];
      if (last === undefined) continue;
      // Committed in SQL: now, and only now, the group may move past these records.
      await this.consumer.commitOffsets([
        { topic: batch.topic, partition: batch.partition, offset: String(BigInt(last.offset) + 1n) },
      ]);
      payload.resolveOffset(last.offset);
      await payload.heartbeat();
    }
  }

  /** Stops fetching, lets the chunk in hand finish and commit, and leaves the group. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.consumer.stop().catch(() => undefined);
      await this.consumer.disconnect();
      this.o.logger.info({ ...this.o.cleaner.counts }, 'extract consumer stopped');
    })();
    return this.closing;
  }
}
