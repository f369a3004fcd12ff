import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { archiveName } from '../../client/archiver/archive-batch.js';
import { createArchiver, type Archiver, type ArchiverDeps } from '../../client/archiver/archiver.js';
import { archiverConfigSchema } from '../../client/archiver/config.js';
import { KafkaSink } from '../../shared/adapters/page-sink/kafka-sink.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import { archiveKey, type BlobStore } from '../../shared/ports/blob-store.js';
import { pageRecord, sinkRecord } from '../contract/page-sink.contract.js';
import {
  archivedCounts,
  committedOffsets,
  deleteGroup,
  highWatermarks,
  produceRaw,
  readArchives,
  type ArchiveObject,
} from '../helpers/archives.js';
import { deleteTopic, testTopicName } from '../helpers/kafka-topic.js';
import { removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { kafkaSettings, requireKafka, requireMinio, s3Settings } from '../helpers/services.js';
import { waitFor } from '../helpers/wait-for.js';

/** A fresh topic, bucket, group and job; everything removed by `cleanup`. */
async function fixture(partitions: number) {
  await requireKafka();
  await requireMinio();
  const topic = testTopicName();
  const bucket = testBucketName();
  const groupId = `test-${randomUUID()}`;
  const jobId = `job-${randomUUID().slice(0, 8)}`;
  const blobStore = createMinioBlobStore({ ...s3Settings, s3Bucket: bucket });
  const sink = new KafkaSink({
    brokers: kafkaSettings.kafkaBrokers,
    topic,
    partitions,
    blobStore,
    logger: silentLogger(),
  });
  await sink.start();
  const archivers: Archiver[] = [];
  return {
    topic,
    bucket,
    groupId,
    jobId,
    blobStore,
    sink,
    archiver(overrides: Record<string, unknown> = {}, deps: Partial<ArchiverDeps> = {}): Archiver {
      const config = archiverConfigSchema.parse({
        ...kafkaSettings,
        ...s3Settings,
        kafkaTopic: topic,
        s3Bucket: bucket,
        archiveJobId: jobId,
        archiveGroupId: groupId,
        archiveMaxRecords: 100,
        archiveMaxAgeMs: 300,
        archiveSessionTimeoutMs: 6000,
        ...overrides,
      });
      const archiver = createArchiver(config, { blobStore, logger: silentLogger(), ...deps });
      archivers.push(archiver);
      return archiver;
    },
    archives: () => readArchives(bucket, jobId),
    async cleanup(): Promise<void> {
      for (const a of archivers) await a.close().catch(() => undefined);
      await sink.close();
      await blobStore.close();
      await deleteGroup(groupId);
      await deleteTopic(topic);
      await removeBucket(bucket);
    },
  };
}

function lineCount(objects: readonly ArchiveObject[]): number {
  return objects.reduce((n, o) => n + o.lines.length, 0);
}

/** Each object holds consecutive offsets of one partition, exactly the range its name says. */
function assertNamesMatchContent(objects: readonly ArchiveObject[], topic: string): void {
  for (const o of objects) {
    const offsets = o.lines.map((l) => l.offset);
    assert.equal(o.name.topic, topic);
    assert.ok(
      o.lines.every((l) => l.partition === o.name.partition && l.topic === topic),
      o.key,
    );
    assert.equal(BigInt(offsets[0] ?? -1), o.name.first, o.key);
    assert.equal(BigInt(offsets.at(-1) ?? -1), o.name.last, o.key);
    assert.deepEqual(
      offsets,
      offsets.map((_, i) => Number(o.name.first) + i),
      `${o.key}: consecutive offsets`,
    );
  }
}

async function waitForCommits(groupId: string, topic: string): Promise<void> {
  const high = await highWatermarks(topic);
  await waitFor(
    async () => {
      const committed = await committedOffsets(groupId, topic);
      return [...high].every(([p, hw]) => committed.get(p) === hw);
    },
    { timeoutMs: 30_000, intervalMs: 200, message: 'offsets committed up to the end of every partition' },
  );
}

describe('archiver (Kafka → MinIO)', () => {
  it('archives every record exactly once, by job and UTC date, then commits', async () => {
    const fx = await fixture(3);
    try {
      const N = 900;
      const day1 = Date.parse('2024-04-01T23:59:00Z');
      const day2 = Date.parse('2024-04-02T00:00:01Z');
      const records = Array.from({ length: N }, (_, i) =>
        pageRecord(`https://a.test/page/${i}`, i, {
          fetchedAt: new Date((i < N / 2 ? day1 : day2) + i).toISOString(),
        }),
      );
      for (let i = 0; i < N; i += 150) await fx.sink.write(records.slice(i, i + 150).map(sinkRecord));
      // The archive keeps raw data: messages that are not page records, not even JSON.
      const raw = [Buffer.from([0xff, 0x00, 0x0a, 0x7b]), Buffer.from('not json\nat all')];
      await produceRaw(fx.topic, raw);

      const archiver = fx.archiver();
      await archiver.start();
      let objects: ArchiveObject[] = [];
      await waitFor(
        async () => {
          objects = await fx.archives();
          return lineCount(objects) >= N + raw.length;
        },
        { timeoutMs: 60_000, intervalMs: 300, message: 'every record archived' },
      );
      await waitForCommits(fx.groupId, fx.topic);
      await archiver.close();
      objects = await fx.archives();

      // Exactly once: every (partition, offset) once, every page once.
      const counts = archivedCounts(objects);
      assert.equal(lineCount(objects), N + raw.length);
      assert.equal(counts.size, N + raw.length);
      const high = await highWatermarks(fx.topic);
      assert.equal(
        [...high.values()].reduce((a, b) => a + b, 0),
        N + raw.length,
      );
      const pages = objects.flatMap((o) => o.lines).filter((l) => l.value !== undefined);
      assert.deepEqual(
        pages.map((l) => (l.value as { url: string }).url).sort(),
        records.map((r) => r.url).sort(),
      );
      for (const line of pages) {
        const record = records.find((r) => r.url === line.key);
        assert.deepEqual(line.value, record, 'the record as it was written');
      }
      const rawLines = objects.flatMap((o) => o.lines).filter((l) => l.valueBase64 !== undefined);
      assert.deepEqual(
        rawLines.map((l) => Buffer.from(l.valueBase64 ?? '', 'base64')).sort(Buffer.compare),
        [...raw].sort(Buffer.compare),
      );

      // Layout: archives/<job>/<yyyy>/<mm>/<dd>/<topic>-p<n>-<first>-<last>.jsonl.gz, dated by the
      // first record of the object.
      assertNamesMatchContent(objects, fx.topic);
      for (const o of objects) {
        const first = o.lines[0]?.value as { fetchedAt?: string } | undefined;
        const date = first?.fetchedAt ? new Date(first.fetchedAt) : new Date(o.lines[0]?.timestamp ?? '');
        assert.equal(
          o.key,
          archiveKey({
            jobId: fx.jobId,
            date,
            name: archiveName(fx.topic, o.name.partition, o.name.first, o.name.last),
          }),
        );
      }
      const days = new Set(objects.map((o) => o.day));
      assert.ok(days.has('2024/04/01') && days.has('2024/04/02'), [...days].join(' '));
      assert.ok(
        objects.every((o) => o.lines.length <= 100),
        'archiveMaxRecords holds',
      );
    } finally {
      await fx.cleanup();
    }
  });

  it('an S3 outage keeps the batches and retries them; nothing is committed before it is stored', async () => {
    const fx = await fixture(2);
    try {
      let down = true;
      let failures = 0;
      const real = fx.blobStore;
      const failing = (): never => {
        failures += 1;
        throw new StorageError('BLOB_STORE_UNAVAILABLE', 'S3 is unavailable (ECONNREFUSED)');
      };
      const flaky: BlobStore = {
        location: real.location,
        putContentAddressed: (body, options) => real.putContentAddressed(body, options),
        put: async (key, body, options) => (down ? failing() : real.put(key, body, options)),
        get: (key) => real.get(key),
        exists: (key) => real.exists(key),
        delete: (key) => real.delete(key),
        list: (prefix) => (down ? failing() : real.list(prefix)),
        close: () => real.close(),
      };
      const N = 120;
      await fx.sink.write(
        Array.from({ length: N }, (_, i) => sinkRecord(pageRecord(`https://b.test/${i}`, i))),
      );
      const archiver = fx.archiver({}, { blobStore: flaky, retryInitialDelayMs: 20, retryMaxDelayMs: 100 });
      await archiver.start();
      await waitFor(() => failures >= 10, { timeoutMs: 20_000, message: 'stores failing and retried' });
      // Consuming went on (the batches are full) but nothing was committed.
      const committed = await committedOffsets(fx.groupId, fx.topic);
      assert.ok(
        [...committed.values()].every((o) => o === -1),
        `no commit during the outage: ${[...committed]}`,
      );
      assert.equal((await fx.archives()).length, 0);

      down = false;
      let objects: ArchiveObject[] = [];
      await waitFor(
        async () => {
          objects = await fx.archives();
          return lineCount(objects) >= N;
        },
        { timeoutMs: 30_000, intervalMs: 200, message: 'archived once S3 is back' },
      );
      await waitForCommits(fx.groupId, fx.topic);
      assert.equal(lineCount(objects), N);
      assert.equal(archivedCounts(objects).size, N);
      assertNamesMatchContent(objects, fx.topic);
    } finally {
      await fx.cleanup();
    }
  });

  it('archivers of one group share the partitions and hand them over on rebalance', async () => {
    const fx = await fixture(4);
    try {
      const N = 1600;
      const producing = (async () => {
        for (let i = 0; i < N; i += 100) {
          await fx.sink.write(
            Array.from({ length: 100 }, (_, j) => sinkRecord(pageRecord(`https://d.test/${i + j}`, i + j))),
          );
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      })();
      let objects: ArchiveObject[] = [];
      const objectsAtLeast = (count: number): Promise<void> =>
        waitFor(
          async () => {
            objects = await fx.archives();
            return objects.length >= count;
          },
          { timeoutMs: 30_000, intervalMs: 100, message: `${count} objects` },
        );
      const first = fx.archiver({ archiveMaxRecords: 50 });
      await first.start();
      await objectsAtLeast(2);
      // A second member joins: the partitions are split between the two (a rebalance)…
      const second = fx.archiver({ archiveMaxRecords: 50 });
      await second.start();
      await objectsAtLeast(objects.length + 6);
      // …and the first leaves cleanly: its batches are stored and committed, the rest moves over.
      await first.close();
      await producing;
      await waitFor(
        async () => {
          objects = await fx.archives();
          return archivedCounts(objects).size === N;
        },
        { timeoutMs: 60_000, intervalMs: 250, message: 'every record archived' },
      );
      await waitForCommits(fx.groupId, fx.topic);
      objects = await fx.archives();
      assertNamesMatchContent(objects, fx.topic);
      const starts = objects.map((o) => `${o.name.partition}:${o.name.first}`);
      assert.equal(new Set(starts).size, starts.length, `no two objects from one offset: ${starts}`);
      const duplicates = lineCount(objects) - archivedCounts(objects).size;
      process.stdout.write(`archiver rebalance: ${N} records, ${duplicates} archived twice\n`);
    } finally {
      await fx.cleanup();
    }
  });

  it('re-archiving after a crash between store and commit overwrites the same object', async () => {
    const fx = await fixture(1);
    try {
      const N = 30;
      const records = Array.from({ length: N }, (_, i) => pageRecord(`https://c.test/${i}`, i));
      await fx.sink.write(records.map(sinkRecord));
      // What a run that died after storing offsets 0..9 but before committing them left behind.
      const staleKey = archiveKey({
        jobId: fx.jobId,
        date: new Date(records[0]?.fetchedAt ?? ''),
        name: archiveName(fx.topic, 0, 0n, 9n),
      });
      await fx.blobStore.put(staleKey, gzipSync('{"stale":true}\n'));

      const archiver = fx.archiver({ archiveMaxRecords: 1000 });
      await archiver.start();
      let objects: ArchiveObject[] = [];
      await waitFor(
        async () => {
          objects = await fx.archives();
          return lineCount(objects) >= N && !objects.some((o) => o.lines.some((l) => 'stale' in l));
        },
        { timeoutMs: 30_000, intervalMs: 200, message: 'archived, the stale object overwritten' },
      );
      await waitForCommits(fx.groupId, fx.topic);
      objects = await fx.archives();
      assert.equal(objects[0]?.key, staleKey);
      assert.deepEqual(
        objects[0]?.lines.map((l) => l.offset),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      assert.equal(objects.filter((o) => o.name.first === 0n).length, 1, 'one object from offset 0');
      assert.equal(lineCount(objects), N);
      assertNamesMatchContent(objects, fx.topic);
    } finally {
      await fx.cleanup();
    }
  });
});
