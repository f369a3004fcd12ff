import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { SinkRecord } from '../../ports/page-sink.js';
import type { ReadRange } from './kafka-checkpoint.js';
import { KAFKA_RETRY } from './kafka-client.js';

export interface ReadLimits {
  /** Stop once the values read add up to this. */
  maxBytes: number;
  /** Stop after this long. */
  timeoutMs: number;
}

export interface ReadResult {
  records: SinkRecord[];
  /** Every range was read to its end. */
  complete: boolean;
}

/**
 * Reads offset ranges of a topic with a short-lived consumer of its own group (kafkajs has no
 * group-less consumer): it starts at the end of every partition, seeks the ranged ones to their
 * first offset, and stops once each range is read, or at a limit. Nothing is committed, and the
 * group is deleted afterwards.
 */
export async function readRanges(
  kafka: Kafka,
  topic: string,
  ranges: readonly ReadRange[],
  limits: ReadLimits,
): Promise<ReadResult> {
  if (ranges.length === 0) return { records: [], complete: true };
  const groupId = `ackcrawl-recover-${randomUUID()}`;
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
    retry: KAFKA_RETRY,
  });
  const todo = new Map(ranges.map((r) => [r.partition, r]));
  const found = new Map<number, SinkRecord[]>();
  let bytes = 0;
  let full = false;
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const range = todo.get(batch.partition);
        if (!range || full) return;
        const list = found.get(batch.partition) ?? [];
        found.set(batch.partition, list);
        for (const message of batch.messages) {
          const offset = Number(message.offset);
          if (offset < range.from) continue;
          if (offset >= range.to) break;
          if (message.value) {
            bytes += message.value.length;
            if (bytes > limits.maxBytes) {
              full = true;
              break;
            }
            list.push({ key: message.key?.toString('utf8') ?? '', value: message.value });
          }
          if (offset + 1 >= range.to) todo.delete(batch.partition);
        }
        if (Number(batch.highWatermark) <= range.from) todo.delete(batch.partition);
        if (full || todo.size === 0) finish();
      },
    });
    for (const range of ranges)
      consumer.seek({ topic, partition: range.partition, offset: String(range.from) });
    await Promise.race([
      finished,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, limits.timeoutMs))),
    ]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
    await deleteGroup(kafka, groupId);
  }
  const records = ranges.flatMap((r) => found.get(r.partition) ?? []);
  return { records, complete: !full && todo.size === 0 };
}

async function deleteGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteGroups([groupId]);
  } catch {
    // An empty group without offsets expires by itself.
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
