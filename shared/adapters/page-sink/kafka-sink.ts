import type { ConnectionOptions } from 'node:tls';
import { Partitioners, type ISocketFactory, type PartitionMetadata } from 'kafkajs';
import { StorageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { BlobStore } from '../../ports/blob-store.js';
import type { PageSink, SinkRecord } from '../../ports/page-sink.js';
import { claimCheck } from './claim-check.js';
import { byPartition, splitIntoSends } from './kafka-batches.js';
import { formatKafkaCheckpoint, PartitionEnds } from './kafka-checkpoint.js';
import { toSinkFailure } from './kafka-errors.js';
import { untilTopicServed } from './kafka-topic.js';
import { recoverAfter } from './kafka-recovery.js';
import type { KafkaCompression } from './kafka-compression.js';
import { closedError, ProducerSlot } from './kafka-producer-slot.js';
import { createKafkajsTransport, type KafkaTransport } from './kafka-transport.js';

import type { PublishTimer } from '../../metrics/publish-latency.js';
export interface KafkaSinkOptions {
  brokers: readonly string[];
  topic: string;
  clientId?: string;
  /** Partitions of the topic when this sink creates it. */
  partitions?: number;
  /** Replicas of the topic when this sink creates it (with `min.insync.replicas` of all but one). */
  replicationFactor?: number;
  /** Where bodies and link lists of large records go (the claim check). Not closed by the sink. */
  blobStore: BlobStore;
  /** A record larger than this has its body, then its link lists, moved to the blob store (default 512 KiB). */
  bodyThresholdBytes?: number;
  /** A record still larger than this after the claim check is refused (broker default is 1 MiB). */
  maxMessageBytes?: number;
  /** Bytes in one send (one produce request) across partitions (default 16 MiB). */
  maxRequestBytes?: number;
  /**
   * A send not confirmed by then is abandoned and its write fails with a retriable SINK_TIMEOUT
   * (default 30 s). Each send of a write has its own; connecting is bounded by it too.
   */
  writeTimeoutMs?: number;
  /** How record batches are compressed (default none). */
  compression?: KafkaCompression;
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /** `recover` reads at most this many bytes of records (default 256 MiB) ... */
  maxRecoverBytes?: number;
  /** ... and for at most this long (default 60 s). */
  recoverTimeoutMs?: number;
  /** How connections to brokers are opened (tests route them through a proxy that can stall). */
  socketFactory?: ISocketFactory;
  /** TLS to the brokers (shared/config/tls.ts kafkaSsl); absent: plain TCP. */
  ssl?: ConnectionOptions | undefined;
  /** Replaces kafkajs (unit tests); `brokers` and the connection settings are then unused. */
  transport?: KafkaTransport;
  logger: Logger;
  /** Times each producer send (`ackcrawl_kafka_publish_duration_seconds`); absent: not timed. */
  publishTimer?: PublishTimer;
}

interface Outgoing {
  key: Buffer;
  value: Buffer;
  /** The record as the caller gave it. */
  original: SinkRecord;
}

const noop = (): void => undefined;

/**
 * Page records into a Kafka topic: one message per record, keyed by its normalised URL, sent with
 * `acks: all` by an idempotent producer; `write` resolves once Kafka confirmed every message (and
 * the blob store every moved body and link list), with a checkpoint: where this sink's writes end
 * in each partition. Writes run one at a time, so per key the order of writes is the order in the
 * topic.
 *
 * A write is split into sends bounded in bytes, each with its own deadline, and each send into one
 * produce request per partition, so Kafka confirms or refuses each partition's part on its own (a
 * request across partitions led by several brokers fails whole when one of them fails, and sent
 * again it stored the others' parts twice). A send that misses its deadline is abandoned: its
 * producer's connections are cut, so nothing of it can reach Kafka any more, and the next write
 * starts only once it has ended, on a new producer. Two writes of the same records never race.
 * Records a failed write did store (in earlier sends, or other partitions' parts) are not sent
 * again when the same record objects are written again. Delivery stays at-least-once: a send
 * abandoned or failed after the broker appended it is written again. `recover` finds what was
 * written after a checkpoint.
 */
export class KafkaSink implements PageSink {
  private readonly logger: Logger;
  private readonly transport: KafkaTransport;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private partitionMetadata: PartitionMetadata[] = [];
  private readonly slot: ProducerSlot;
  private preparing: Promise<void> | null = null;
  private ends: PartitionEnds | null = null;
  private wroteAny = false;
  /** Records a failed write made durable before it failed. */
  private readonly durable = new WeakSet<SinkRecord>();
  private chain: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;

  constructor(private readonly options: KafkaSinkOptions) {
    const logger = options.logger.child({ topic: options.topic });
    this.logger = logger.child({ module: 'kafka-sink' });
    this.transport =
      options.transport ??
      createKafkajsTransport({
        brokers: options.brokers,
        topic: options.topic,
        clientId: options.clientId,
        partitions: options.partitions ?? 6,
        replicationFactor: options.replicationFactor ?? 1,
        connectionTimeoutMs: options.connectionTimeoutMs,
        requestTimeoutMs: options.requestTimeoutMs,
        socketFactory: options.socketFactory,
        ssl: options.ssl,
        compression: options.compression ?? 'none',
        logger,
      });
    this.slot = new ProducerSlot({
      transport: this.transport,
      prepare: () => this.prepare(),
      timeoutMs: options.writeTimeoutMs ?? 30_000,
      topic: options.topic,
      logger: this.logger,
      ...(options.publishTimer ? { publishTimer: options.publishTimer } : {}),
    });
  }

  get topic(): string {
    return this.options.topic;
  }

  /** Connects and creates the topic if missing. Optional: the first write does it too. */
  async start(): Promise<void> {
    if (this.closing) throw closedError();
    try {
      await this.slot.connected();
    } catch (err) {
      throw toSinkFailure(err, this.topic).error;
    }
  }

  write(records: readonly SinkRecord[]): Promise<string | null> {
    // Checked at call time: writes made before close() still run, close() waits for them.
    if (this.closing) return Promise.reject(closedError());
    return this.enqueue(() => this.writeNow(records));
  }

  /**
   * The records written to the topic at or after `checkpoint` (see kafka-recovery.ts), with their
   * link lists read back from the blob store. Reading fails soft: what cannot be read is fetched
   * again by the crawl, a duplicate at worst.
   */
  recover(checkpoint: string | null): Promise<SinkRecord[]> {
    if (this.closing) return Promise.reject(closedError());
    return this.enqueue(async () => {
      const found = await recoverAfter(checkpoint, {
        topic: this.topic,
        transport: this.transport,
        blobStore: this.options.blobStore,
        prepare: () => this.prepare(),
        maxBytes: this.options.maxRecoverBytes ?? 256 * 1024 * 1024,
        timeoutMs: this.options.recoverTimeoutMs ?? 60_000,
        logger: this.logger,
      });
      // Until this sink writes to a partition, its checkpoint keeps that partition's old end: records
      // found here are settled only once their tasks are leased again.
      if (found.from && !this.wroteAny) this.ends = new PartitionEnds(found.from);
      return found.records;
    });
  }

  /** Waits for the write in progress (and any send it abandoned), then disconnects. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.chain;
      await this.slot.close();
    })();
    return this.closing;
  }

  /** One operation at a time; after one that abandoned a send, the next waits until it ended. */
  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.chain.then(operation);
    this.chain = run.then(noop, noop).then(() => this.slot.abandonedEnded());
    return run;
  }

  private async writeNow(records: readonly SinkRecord[]): Promise<string | null> {
    if (records.length === 0) return this.checkpoint();
    const started = Date.now();
    const pending = records.filter((r) => !this.durable.has(r));
    const confirmed: SinkRecord[] = [];
    try {
      if (pending.length > 0) await this.send(pending, confirmed);
    } catch (err) {
      for (const record of confirmed) this.durable.add(record);
      throw err;
    }
    for (const record of records) this.durable.delete(record);
    this.logger.debug({ records: records.length, ms: Date.now() - started }, 'records confirmed');
    return this.checkpoint();
  }

  private checkpoint(): string | null {
    if (!this.wroteAny || !this.ends) return null;
    return formatKafkaCheckpoint({ topic: this.topic, ends: this.ends.snapshot() });
  }

  private async send(records: readonly SinkRecord[], confirmed: SinkRecord[]): Promise<void> {
    try {
      // Connected, and the topic's partitions known, before the records are sized for it.
      await this.slot.connect();
      const checked = await claimCheck(records, {
        blobStore: this.options.blobStore,
        thresholdBytes: this.options.bodyThresholdBytes ?? 512 * 1024,
      });
      if (checked.moved + checked.movedLinks > 0) {
        this.logger.debug(
          { bodies: checked.moved, linkLists: checked.movedLinks },
          'moved to the blob store (claim check)',
        );
      }
      const maxMessageBytes = this.options.maxMessageBytes ?? 1_000_000;
      const messages: Outgoing[] = checked.records.map((r, i) => ({
        key: Buffer.from(r.key),
        value: r.value,
        original: records[i] as SinkRecord,
      }));
      for (const m of messages) {
        if (m.value.length > maxMessageBytes) {
          throw new StorageError(
            'SINK_RECORD_TOO_LARGE',
            `record for ${m.key.toString()} is ${m.value.length} bytes without its body and links; the limit is ${maxMessageBytes}`,
          );
        }
      }
      const sends = splitIntoSends(messages, (key) => this.partitionOf(key), {
        maxPartitionBytes: maxMessageBytes,
        maxRequestBytes: this.options.maxRequestBytes ?? 16 * 1024 * 1024,
      });
      for (const send of sends) {
        await this.slot.send(
          byPartition(send, (key) => this.partitionOf(key)),
          (part, answers) => {
            this.ends?.confirm(answers, new Map([[part.partition, part.messages.length]]));
            this.wroteAny = true;
            for (const m of part.messages) confirmed.push(m.original);
          },
        );
      }
    } catch (err) {
      const failure = toSinkFailure(err, this.topic);
      if (failure.resetProducer) {
        this.logger.warn(
          { code: failure.error.code },
          'Kafka rejected the producer state; starting a new producer',
        );
        await this.slot.drop();
      }
      throw failure.error;
    }
  }

  /** The topic, its partition count and where it ends, once. */
  private prepare(): Promise<void> {
    this.preparing ??= (async () => {
      const partitions = await this.transport.prepareTopic();
      this.partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionErrorCode: 0,
        partitionId,
        leader: 0,
        replicas: [],
        isr: [],
      }));
      // A topic just created on several brokers is not served by all of them at once.
      const offsets = await untilTopicServed(() => this.transport.offsets());
      if (!this.ends) {
        const ends: number[] = [];
        for (const o of offsets) ends[o.partition] = o.high;
        this.ends = new PartitionEnds(ends);
      }
    })().catch((err: unknown) => {
      this.preparing = null;
      throw err;
    });
    return this.preparing;
  }

  /**
   * Each key's partition: kafkajs's default partitioner over the count read at start. It goes to
   * kafkajs with each message, so the requests are the parts this sink counted.
   */
  private partitionOf(key: Buffer): number {
    const partitionMetadata = this.partitionMetadata;
    return this.partitioner({ topic: this.topic, partitionMetadata, message: { key, value: null } });
  }
}
