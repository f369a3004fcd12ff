import { Partitioners, type PartitionMetadata } from 'kafkajs';
import type { ReadRange } from '../../shared/adapters/page-sink/kafka-checkpoint.js';
import type { ReadLimits, ReadResult } from '../../shared/adapters/page-sink/kafka-reader.js';
import type {
  KafkaTransport,
  SendAnswer,
  SinkProducer,
} from '../../shared/adapters/page-sink/kafka-transport.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';

/** One call of a fake producer's `send`, as the test's `behave` hook sees it. */
export interface SendCall {
  producer: FakeProducer;
  /** Counts every send of every producer, from 1. */
  n: number;
  /** The partition the send is for (a send covers one, as the sink's requests do). */
  partition: number;
  keys: string[];
}

/** When each send started and ended (ms, performance.now()), and how. */
export interface SendLog {
  producer: number;
  n: number;
  partition: number;
  records: number;
  /** Keys and values. */
  bytes: number;
  startedAt: number;
  endedAt: number;
  result: 'ok' | 'failed';
}

/**
 * Kafka as a few in-memory partition logs, for unit tests of the Kafka sink. Producers append what
 * they are sent to the partition it is sent to unless `behave` throws, delays them, or they were
 * abandoned by then: an abandoned producer's sends fail once `behave` returns, and never append.
 */
export class FakeKafkaTransport implements KafkaTransport {
  readonly logs: SinkRecord[][];
  readonly producers: FakeProducer[] = [];
  readonly sends: SendLog[] = [];
  behave: (call: SendCall) => Promise<void> | void = () => undefined;
  prepare: () => Promise<void> = async () => undefined;
  active = 0;
  maxActive = 0;
  private calls = 0;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly metadata: PartitionMetadata[];

  constructor(readonly partitions = 3) {
    this.logs = Array.from({ length: partitions }, () => []);
    this.metadata = Array.from({ length: partitions }, (_, partitionId) => ({
      partitionErrorCode: 0,
      partitionId,
      leader: 0,
      replicas: [],
      isr: [],
    }));
  }

  partitionOf(key: string): number {
    return this.partitioner({
      topic: 't',
      partitionMetadata: this.metadata,
      message: { key: Buffer.from(key), value: null },
    });
  }

  /** Every stored record's key, partition by partition. */
  keys(): string[] {
    return this.logs.flatMap((log) => log.map((r) => r.key));
  }

  async prepareTopic(): Promise<number> {
    await this.prepare();
    return this.partitions;
  }

  async offsets(): Promise<{ partition: number; low: number; high: number }[]> {
    return this.logs.map((log, partition) => ({ partition, low: 0, high: log.length }));
  }

  producer(): SinkProducer {
    const producer = new FakeProducer(this, this.producers.length);
    this.producers.push(producer);
    return producer;
  }

  async read(ranges: readonly ReadRange[], limits: ReadLimits): Promise<ReadResult> {
    const records: SinkRecord[] = [];
    let bytes = 0;
    for (const { partition, from, to } of ranges) {
      for (const record of (this.logs[partition] ?? []).slice(from, to)) {
        bytes += record.value.length;
        if (bytes > limits.maxBytes) return { records, complete: false };
        records.push(record);
      }
    }
    return { records, complete: true };
  }

  /** @internal */
  async send(
    producer: FakeProducer,
    partition: number,
    messages: readonly { key: Buffer; value: Buffer }[],
  ): Promise<SendAnswer[]> {
    const n = ++this.calls;
    const startedAt = performance.now();
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    const bytes = messages.reduce((sum, m) => sum + m.key.length + m.value.length, 0);
    const entry = { producer: producer.id, n, partition, records: messages.length, bytes, startedAt };
    try {
      await this.behave({ producer, n, partition, keys: messages.map((m) => m.key.toString()) });
      if (producer.abandoned)
        throw Object.assign(new Error('Connection error: abandoned'), { name: 'KafkaJSConnectionError' });
      const log = this.logs[partition];
      if (!log) throw new Error(`no partition ${partition}`);
      const answer: SendAnswer = { partition, baseOffset: String(log.length) };
      for (const m of messages) log.push({ key: m.key.toString(), value: m.value });
      this.sends.push({ ...entry, endedAt: performance.now(), result: 'ok' });
      return [answer];
    } catch (err) {
      this.sends.push({ ...entry, endedAt: performance.now(), result: 'failed' });
      throw err;
    } finally {
      this.active -= 1;
    }
  }
}

export class FakeProducer implements SinkProducer {
  abandoned = false;
  connected = false;
  disconnected = false;
  private abandonHooks: (() => void)[] = [];

  constructor(
    private readonly transport: FakeKafkaTransport,
    readonly id: number,
  ) {}

  async connect(): Promise<void> {
    this.connected = true;
  }

  send(partition: number, messages: readonly { key: Buffer; value: Buffer }[]): Promise<SendAnswer[]> {
    return this.transport.send(this, partition, messages);
  }

  abandon(): void {
    this.abandoned = true;
    for (const hook of this.abandonHooks.splice(0)) hook();
  }

  /** Resolves once the sink abandons this producer. */
  untilAbandoned(): Promise<void> {
    if (this.abandoned) return Promise.resolve();
    return new Promise((resolve) => this.abandonHooks.push(resolve));
  }

  async disconnect(): Promise<void> {
    this.disconnected = true;
  }
}
