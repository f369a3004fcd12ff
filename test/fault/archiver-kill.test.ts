import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { KafkaSink } from '../../shared/adapters/page-sink/kafka-sink.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { silentLogger } from '../../shared/logger.js';
import { pageRecord, sinkRecord } from '../contract/page-sink.contract.js';
import {
  archivedCounts,
  committedOffsets,
  deleteGroup,
  highWatermarks,
  readArchives,
  type ArchiveObject,
} from '../helpers/archives.js';
import { startCli, type CliRun } from '../helpers/cli.js';
import { deleteTopic, testTopicName } from '../helpers/kafka-topic.js';
import { removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { kafkaSettings, requireKafka, requireMinio, s3Settings } from '../helpers/services.js';
import { waitFor } from '../helpers/wait-for.js';

const N = 3000;
const CHUNK = 50;

test(
  'a SIGKILLed archiver goes on from its commits: every record archived, no object name twice',
  { timeout: 240_000 },
  async () => {
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
      partitions: 3,
      blobStore,
      logger: silentLogger(),
    });
    const env: NodeJS.ProcessEnv = {
      ACKCRAWL_KAFKA_BROKERS: kafkaSettings.kafkaBrokers.join(','),
      ACKCRAWL_KAFKA_TOPIC: topic,
      ACKCRAWL_S3_ENDPOINT: s3Settings.s3Endpoint,
      ACKCRAWL_S3_BUCKET: bucket,
      ACKCRAWL_ARCHIVE_JOB_ID: jobId,
      ACKCRAWL_ARCHIVE_GROUP_ID: groupId,
      ACKCRAWL_ARCHIVE_MAX_RECORDS: '50',
      ACKCRAWL_ARCHIVE_MAX_AGE_MS: '200',
      ACKCRAWL_ARCHIVE_SESSION_TIMEOUT_MS: '6000',
      ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'error',
    };
    const runs: CliRun[] = [];
    const start = (): CliRun => {
      const run = startCli(['archive'], env);
      runs.push(run);
      return run;
    };
    let objects: ArchiveObject[] = [];
    const objectsAtLeast = async (count: number): Promise<void> =>
      waitFor(
        async () => {
          objects = await readArchives(bucket, jobId);
          return objects.length >= count;
        },
        { timeoutMs: 60_000, intervalMs: 100, message: `${count} archive objects` },
      );
    try {
      await sink.start();
      // Pages keep arriving while archivers are killed and started again.
      const producing = (async () => {
        for (let i = 0; i < N; i += CHUNK) {
          const chunk = Array.from({ length: CHUNK }, (_, j) =>
            sinkRecord(pageRecord(`https://k.test/${i + j}`, i + j)),
          );
          await sink.write(chunk);
          await sleep(40);
        }
      })();

      for (const round of [1, 2]) {
        const run = start();
        await objectsAtLeast(objects.length + 4);
        run.child.kill('SIGKILL');
        const exit = await run.done;
        assert.equal(exit.signal, 'SIGKILL', `round ${round}: ${exit.stderr}`);
      }
      await producing;

      const last = start();
      const high = await highWatermarks(topic);
      const total = [...high.values()].reduce((a, b) => a + b, 0);
      assert.equal(total, N);
      await waitFor(
        async () => {
          objects = await readArchives(bucket, jobId);
          return archivedCounts(objects).size === N;
        },
        { timeoutMs: 90_000, intervalMs: 250, message: 'every record archived' },
      );
      await waitFor(
        async () => {
          const committed = await committedOffsets(groupId, topic);
          return [...high].every(([p, hw]) => committed.get(p) === hw);
        },
        { timeoutMs: 30_000, intervalMs: 200, message: 'offsets committed to the end' },
      );
      // A clean stop after all that: SIGTERM drains and exits 0.
      last.child.kill('SIGTERM');
      const exit = await last.done;
      assert.equal(exit.code, 0, exit.stderr);

      objects = await readArchives(bucket, jobId);
      const counts = archivedCounts(objects);
      for (const [partition, hw] of high) {
        for (let offset = 0; offset < hw; offset += 1) {
          assert.ok(counts.has(`${partition}:${offset}`), `partition ${partition} offset ${offset} archived`);
        }
      }
      const urls = new Set(
        objects.flatMap((o) => o.lines.map((l) => (l.value as { url?: string } | undefined)?.url)),
      );
      assert.equal(urls.size, N, 'every page archived');
      // Re-archiving after a crash overwrites the object of the same name instead of adding one
      // that starts at the same offset.
      const starts = objects.map((o) => `${o.name.partition}:${o.name.first}`);
      assert.equal(new Set(starts).size, starts.length, `no two objects from one offset: ${starts}`);
      const lines = objects.reduce((n, o) => n + o.lines.length, 0);
      const duplicates = lines - counts.size;
      process.stdout.write(
        `archiver kill: ${N} records, ${objects.length} objects, ${duplicates} records archived twice\n`,
      );
    } finally {
      for (const run of runs)
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      await Promise.all(runs.map((r) => r.done));
      await sink.close();
      await blobStore.close();
      await deleteGroup(groupId);
      await deleteTopic(topic);
      await removeBucket(bucket);
    }
  },
);
