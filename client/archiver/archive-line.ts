import { isUtf8 } from 'node:buffer';
import type { KafkaMessage } from 'kafkajs';

/** One Kafka message as one line of an archive object. */
export interface ArchiveLine {
  offset: bigint;
  /** The line, newline included. */
  bytes: Buffer;
  /** The record's `fetchedAt` when it has a valid one, else the Kafka timestamp. */
  date: Date;
}

/**
 * The archive keeps raw data and does not validate it. Each line is a JSON envelope with the
 * message's place in Kafka: `{"topic","partition","offset","timestamp","key","value"}`. A value
 * that is JSON is embedded byte for byte (compacted first only if it spans lines); any other value
 * is kept exactly, as `valueBase64`; a null value (a tombstone) as `"value":null`.
 */
export function archiveLine(topic: string, partition: number, message: KafkaMessage): ArchiveLine {
  const timestamp = Number(message.timestamp);
  const envelope: Record<string, unknown> = {
    topic,
    partition,
    offset: Number(message.offset),
    timestamp: Number.isFinite(timestamp) && timestamp >= 0 ? new Date(timestamp).toISOString() : null,
  };
  const key = message.key;
  if (key === null || isUtf8(key)) envelope.key = key?.toString('utf8') ?? null;
  else envelope.keyBase64 = key.toString('base64');
  const head = JSON.stringify(envelope).slice(0, -1);
  const value = valueOf(message.value);
  const bytes =
    value.kind === 'json'
      ? Buffer.concat([Buffer.from(`${head},"value":`), value.text, Buffer.from('}\n')])
      : Buffer.from(
          value.kind === 'null'
            ? `${head},"value":null}\n`
            : `${head},"valueBase64":"${value.raw.toString('base64')}"}\n`,
        );
  const fetchedAt = value.kind === 'json' ? fetchedAtOf(value.parsed) : null;
  const date = fetchedAt ?? new Date(Number.isFinite(timestamp) && timestamp >= 0 ? timestamp : 0);
  return { offset: BigInt(message.offset), bytes, date };
}

type Value =
  { kind: 'json'; text: Buffer; parsed: unknown } | { kind: 'raw'; raw: Buffer } | { kind: 'null' };

function valueOf(value: Buffer | null): Value {
  if (value === null) return { kind: 'null' };
  if (!isUtf8(value)) return { kind: 'raw', raw: value };
  const text = value.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'raw', raw: value };
  }
  // Newlines can only be whitespace between tokens here: compacting keeps the content.
  const oneLine = /[\r\n]/.test(text) ? Buffer.from(JSON.stringify(parsed)) : value;
  return { kind: 'json', text: oneLine, parsed };
}

function fetchedAtOf(parsed: unknown): Date | null {
  if (typeof parsed !== 'object' || parsed === null || !('fetchedAt' in parsed)) return null;
  const { fetchedAt } = parsed;
  if (typeof fetchedAt !== 'string') return null;
  const date = new Date(fetchedAt);
  return Number.isNaN(date.getTime()) ? null : date;
}
