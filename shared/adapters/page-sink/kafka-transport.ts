import type { ConnectionOptions } from 'node:tls';
import { Partitioners, type CompressionTypes, type ISocketFactory, type Kafka, type Producer } from 'kafkajs';
import type { Logger } from '../../logger.js';
import type { PartitionOffsets, ReadRange } from './kafka-checkpoint.js';
import { createKafkaClient, PRODUCER_RETRY } from './kafka-client.js';
import type { KafkaCompression } from './kafka-compression.js';
import { kafkaCompressionType } from './kafka-gzip-codec.js';
import { readRanges, type ReadLimits, type ReadResult } from './kafka-reader.js';
import { killableSockets, type KillableSockets } from './kafka-sockets.js';
import { ensureTopic } from './kafka-topic.js';

/** One produce request's answer for one partition. */
export interface SendAnswer {
  partition: number;
  /** Offset of the first record the request put in the partition. */
  baseOffset?: string | undefined;
}

/** An idempotent producer writing to the sink's topic with `acks: all`. */
export interface SinkProducer {
  connect(): Promise<void>;
  /**
   * One produce request of `messages` to one partition (kafkajs may try it once more); resolves
   * once every message is confirmed. A request covers one partition, so it fails or succeeds as a
   * whole: trying it again with this producer reuses its sequence numbers, and the broker drops
   * what it already has.
   */
  send(partition: number, messages: readonly { key: Buffer; value: Buffer }[]): Promise<SendAnswer[]>;
  /**
   * Cuts this producer off: its connections close, sends in flight fail soon and nothing more it
   * sends reaches a broker. It is only disconnected afterwards.
   */
  abandon(): void;
  disconnect(): Promise<void>;
}

/** What the Kafka sink needs of Kafka: kafkajs in production, a fake in unit tests. */
export interface KafkaTransport {
  /** Creates the topic if missing; resolves with its partition count. */
  prepareTopic(): Promise<number>;
  /** Each partition's first and next offsets now. */
  offsets(): Promise<PartitionOffsets[]>;
  /** A new producer, not yet connected. */
  producer(): SinkProducer;
  /** The records stored in `ranges`, partition by partition in offset order, within `limits`. */
  read(ranges: readonly ReadRange[], limits: ReadLimits): Promise<ReadResult>;
}

export interface KafkajsTransportOptions {
  brokers: readonly string[];
  topic: string;
  clientId?: string | undefined;
  partitions: number;
  replicationFactor: number;
  connectionTimeoutMs?: number | undefined;
  requestTimeoutMs?: number | undefined;
  /** How connections to brokers are opened (tests route them through a proxy that can stall). */
  socketFactory?: ISocketFactory | undefined;
  /** TLS to the brokers; absent: plain TCP. */
  ssl?: ConnectionOptions | undefined;
  /** How the producers compress record batches; absent: not at all. */
  compression?: KafkaCompression | undefined;
  logger: Logger;
}

export function createKafkajsTransport(options: KafkajsTransportOptions): KafkaTransport {
  const { topic, logger } = options;
  const client = (extra: Partial<Parameters<typeof createKafkaClient>[0]> = {}): Kafka =>
    createKafkaClient({
      brokers: options.brokers,
      clientId: options.clientId,
      connectionTimeoutMs: options.connectionTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      socketFactory: options.socketFactory,
      ssl: options.ssl,
      logger,
      ...extra,
    });
  const kafka = client();
  return {
    prepareTopic: () =>
      ensureTopic(
        kafka,
        { topic, partitions: options.partitions, replicationFactor: options.replicationFactor },
        logger,
      ),
    offsets: async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const offsets = await admin.fetchTopicOffsets(topic);
        return offsets.map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }));
      } finally {
        await admin.disconnect();
      }
    },
    producer: () => {
      // Each producer has its own client and sockets, so abandoning one cuts only its connections.
      const sockets = killableSockets(options.socketFactory);
      return new KafkajsProducer(
        client({ socketFactory: sockets.factory, retry: PRODUCER_RETRY }),
        sockets,
        topic,
        options.requestTimeoutMs ?? 10_000,
        kafkaCompressionType(options.compression ?? 'none'),
      );
    },
    read: (ranges, limits) => readRanges(kafka, topic, ranges, limits),
  };
}

class KafkajsProducer implements SinkProducer {
  private readonly producer: Producer;

  constructor(
    kafka: Kafka,
    private readonly sockets: KillableSockets,
    private readonly topic: string,
    private readonly ackTimeoutMs: number,
    private readonly compression: CompressionTypes,
  ) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: PRODUCER_RETRY,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  send(partition: number, messages: readonly { key: Buffer; value: Buffer }[]): Promise<SendAnswer[]> {
    return this.producer.send({
      topic: this.topic,
      acks: -1,
      timeout: this.ackTimeoutMs,
      compression: this.compression,
      messages: messages.map((m) => ({ key: m.key, value: m.value, partition })),
    });
  }

  abandon(): void {
    this.sockets.kill();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}
