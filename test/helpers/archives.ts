import { gunzipSync } from 'node:zlib';
import { Kafka, logLevel } from 'kafkajs';
import { buffer } from 'node:stream/consumers';
import { parseArchiveName, type ParsedArchiveName } from '../../client/archiver/archive-batch.js';
import { rawMinioClient } from './minio-bucket.js';
import { kafkaSettings } from './services.js';

/** One line of an archive object (client/archiver/archive-line.ts). */
export interface ArchivedLine {
  topic: string;
  partition: number;
  offset: number;
  timestamp: string | null;
  key: string | null;
  value?: unknown;
  valueBase64?: string;
}

export interface ArchiveObject {
  key: string;
  /** `yyyy/mm/dd` from the key. */
  day: string;
  name: ParsedArchiveName;
  lines: ArchivedLine[];
}

/** Every archive object of `jobId` in `bucket`, read back and parsed, in key order. */
export async function readArchives(bucket: string, jobId: string): Promise<ArchiveObject[]> {
  const client = rawMinioClient();
  if (!(await client.bucketExists(bucket))) return [];
  const keys: string[] = [];
  for await (const item of client.listObjectsV2(bucket, `archives/${jobId}/`, true)) {
    if (typeof item.name === 'string') keys.push(item.name);
  }
  const objects: ArchiveObject[] = [];
  for (const key of keys.sort()) {
    const match = /^archives\/[^/]+\/(\d{4}\/\d{2}\/\d{2})\/([^/]+)$/.exec(key);
    const name = parseArchiveName(match?.[2] ?? '');
    if (!match?.[1] || !name) throw new Error(`not an archive key: ${key}`);
    const text = gunzipSync(await buffer(await client.getObject(bucket, key))).toString('utf8');
    if (!text.endsWith('\n')) throw new Error(`${key}: the last line is not terminated`);
    const lines = text
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as ArchivedLine);
    objects.push({ key, day: match[1], name, lines });
  }
  return objects;
}

function testKafka(): Kafka {
  return new Kafka({
    clientId: 'ackcrawl-test',
    brokers: [...kafkaSettings.kafkaBrokers],
    logLevel: logLevel.NOTHING,
  });
}

/** partition → log end offset. */
export async function highWatermarks(topic: string): Promise<Map<number, number>> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  } finally {
    await admin.disconnect();
  }
}

/** partition → the group's committed offset (-1 when none). */
export async function committedOffsets(groupId: string, topic: string): Promise<Map<number, number>> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((entry?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  } finally {
    await admin.disconnect();
  }
}

export async function deleteGroup(groupId: string): Promise<void> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await admin.deleteGroups([groupId]).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}

/** Raw messages on `topic` (not page records: the archive keeps whatever is there). */
export async function produceRaw(topic: string, values: Buffer[]): Promise<void> {
  const producer = testKafka().producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
  } finally {
    await producer.disconnect();
  }
}

/** Where each (partition, offset) was archived: a count per place, across all objects. */
export function archivedCounts(objects: readonly ArchiveObject[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const o of objects) {
    for (const line of o.lines) {
      const place = `${line.partition}:${line.offset}`;
      counts.set(place, (counts.get(place) ?? 0) + 1);
    }
  }
  return counts;
}
