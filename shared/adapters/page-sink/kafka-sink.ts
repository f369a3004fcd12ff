import { Partitioners, type Kafka, type PartitionMetadata, type Producer } from 'kafkajs';
import { StorageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { BlobStore } from '../../ports/blob-store.js';
import type { PageSink, SinkRecord } from '../../ports/page-sink.js';
import { claimCheck } from './claim-check.js';
import { splitIntoSends } from './kafka-batches.js';
import { createKafkaClient, KAFKA_RETRY } from './kafka-client.js';
import { toSinkFailure } from './kafka-errors.js';
import { ensureTopic } from './kafka-topic.js';

export interface KafkaSinkOptions {
  brokers: readonly string[];
  topic: string;
  clientId?: string;
  /** Partitions of the topic when this sink creates it. */
  partitions?: number;
  replicationFactor?: number;
  /** Where bodies of large records go (the claim check). Not closed by the sink. */
  blobStore: BlobStore;
  /** A record larger than this has its body moved to the blob store (default 512 KiB). */
  bodyThresholdBytes?: number;
  /** A record still larger than this after the claim check is refused (broker default is 1 MiB). */
  maxMessageBytes?: number;
  /** A write not confirmed by then fails with a retriable SINK_TIMEOUT (default 30 s). */
  writeTimeoutMs?: number;
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
  logger: Logger;
}

/**
 * Page records into a Kafka topic: one message per record, keyed by its normalised URL, sent with
 * `acks: all` by an idempotent producer; `write` resolves once Kafka confirmed every message (and
 * the blob store every moved body). Writes run one at a time, so per key the order of writes is
 * the order in the topic. Delivery is at-least-once: a write that failed or timed out may still
 * have reached Kafka, and the caller writes it again; `recover` cannot tell, and returns [].
 */
export class KafkaSink implements PageSink {
  private readonly kafka: Kafka;
  private readonly logger: Logger;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private producer: Producer | null = null;
  private starting: Promise<Producer> | null = null;
  private partitionMetadata: PartitionMetadata[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: KafkaSinkOptions) {
    const logger = options.logger.child({ topic: options.topic });
    this.logger = logger.child({ module: 'kafka-sink' });
    this.kafka = createKafkaClient({
      brokers: options.brokers,
      clientId: options.clientId,
      connectionTimeoutMs: options.connectionTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      logger,
    });
  }

  get topic(): string {
    return this.options.topic;
  }

  /** Connects and creates the topic if missing. Optional: the first write does it too. */
  async start(): Promise<void> {
    if (this.closing) throw closedError();
    try {
      await this.connected();
    } catch (err) {
      throw toSinkFailure(err, this.topic).error;
    }
  }

  write(records: readonly SinkRecord[]): Promise<string | null> {
    // Checked at call time: writes made before close() still run, close() waits for them.
    if (this.closing) return Promise.reject(closedError());
    const run = this.chain.then(() => this.writeWithDeadline(records));
    this.chain = run.catch(() => undefined);
    return run;
  }

  async recover(_checkpoint: string | null): Promise<SinkRecord[]> {
    return [];
  }

  /** Waits for the write in progress, then disconnects. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.chain;
      this.closed = true;
      await this.dropProducer();
    })();
    return this.closing;
  }

  private async writeWithDeadline(records: readonly SinkRecord[]): Promise<null> {
    if (records.length === 0) return null;
    const timeoutMs = this.options.writeTimeoutMs ?? 30_000;
    const started = Date.now();
    const attempt = this.send(records);
    // An attempt abandoned at the deadline may still fail (or succeed: a duplicate) later.
    attempt.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.logger.warn({ records: records.length, timeoutMs }, 'Kafka did not confirm a write in time');
        reject(
          new StorageError(
            'SINK_TIMEOUT',
            `Kafka did not confirm ${records.length} records within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
    });
    try {
      await Promise.race([attempt, deadline]);
    } finally {
      clearTimeout(timer);
    }
    this.logger.debug({ records: records.length, ms: Date.now() - started }, 'records confirmed');
    return null;
  }

  private async send(records: readonly SinkRecord[]): Promise<void> {
    try {
      const producer = await this.connected();
      const checked = await claimCheck(records, {
        blobStore: this.options.blobStore,
        thresholdBytes: this.options.bodyThresholdBytes ?? 512 * 1024,
      });
      if (checked.moved > 0) this.logger.debug({ moved: checked.moved }, 'bodies moved to the blob store');
      const maxMessageBytes = this.options.maxMessageBytes ?? 1_000_000;
      const messages = checked.records.map((r) => ({ key: Buffer.from(r.key), value: r.value }));
      for (const m of messages) {
        if (m.value.length > maxMessageBytes) {
          throw new StorageError(
            'SINK_RECORD_TOO_LARGE',
            `record for ${m.key.toString()} is ${m.value.length} bytes without its body; the limit is ${maxMessageBytes}`,
            { retriable: false },
          );
        }
      }
      const sends = splitIntoSends(messages, (key) => this.partitionOf(key), {
        maxPartitionBytes: maxMessageBytes,
        maxRequestBytes: 16 * 1024 * 1024,
      });
      for (const batch of sends) {
        await producer.send({
          topic: this.topic,
          acks: -1,
          timeout: this.options.requestTimeoutMs ?? 10_000,
          messages: batch,
        });
      }
    } catch (err) {
      const failure = toSinkFailure(err, this.topic);
      if (failure.resetProducer) {
        this.logger.warn(
          { code: failure.error.code },
          'Kafka rejected the producer state; starting a new producer',
        );
        await this.dropProducer();
      }
      throw failure.error;
    }
  }

  private connected(): Promise<Producer> {
    this.starting ??= this.open().catch((err: unknown) => {
      this.starting = null;
      throw err;
    });
    return this.starting;
  }

  private async open(): Promise<Producer> {
    const partitions = await ensureTopic(this.kafka, {
      topic: this.topic,
      partitions: this.options.partitions ?? 6,
      replicationFactor: this.options.replicationFactor ?? 1,
    });
    this.partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 0,
      replicas: [],
      isr: [],
    }));
    const producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: KAFKA_RETRY,
    });
    try {
      await producer.connect();
      // close() finished meanwhile (it does not wait for a start outside a write): undo.
      if (this.closed) throw closedError();
    } catch (err) {
      await producer.disconnect().catch(() => undefined);
      throw err;
    }
    this.producer = producer;
    this.logger.info({ partitions }, 'connected to Kafka');
    return producer;
  }

  private async dropProducer(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    this.starting = null;
    if (producer) await producer.disconnect().catch(() => undefined);
  }

  /** The partition kafkajs will choose (same partitioner, same count), to size each send. */
  private partitionOf(key: Buffer): number {
    const partitionMetadata = this.partitionMetadata;
    return this.partitioner({ topic: this.topic, partitionMetadata, message: { key, value: null } });
  }
}

function closedError(): StorageError {
  return new StorageError('SINK_CLOSED', 'the page sink is closed', { retriable: false });
}
