import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaSink } from '../../shared/adapters/page-sink/kafka-sink.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { loadConfig } from '../../shared/config/load.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { silentLogger } from '../../shared/logger.js';
import type { ExtractFailureRow, ResultRow, SqlStore } from '../../shared/ports/sql-store.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { extractConfigSchema, type ExtractConfig } from '../../master/extract/config.js';
import { startExtract } from '../../master/extract/run-extract.js';
import { labelledPages } from '../../scripts/bench/extract/fixtures.js';
import { pageRecordOf } from '../../scripts/bench/extract/page-records.js';
import { startCli } from '../helpers/cli.js';
import { deleteTopic, testTopicName } from '../helpers/kafka-topic.js';
import { removeBucket, rawMinioClient, testBucketName } from '../helpers/minio-bucket.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { kafkaSettings, requireKafka, requireMinio, s3Settings } from '../helpers/services.js';
import { waitFor } from '../helpers/wait-for.js';

const RUN = 'run-extract-test';

async function allResults(store: SqlStore): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  let after: string | null = null;
  do {
    const page = await store.results.list(RUN, { limit: 500, after });
    rows.push(...page.items);
    after = page.next;
  } while (after !== null);
  return rows;
}

const failures = async (store: SqlStore): Promise<ExtractFailureRow[]> =>
  (await store.extractFailures.list({ limit: 500 })).items;

/**
 * `ackcrawl extract` on the real Kafka, MinIO and PostgreSQL of scripts/services.sh: page records
 * of real pages written by the project's Kafka sink (bodies over 64 KiB claim-checked to MinIO),
 * some of them twice, and two poison records. The consumer is stopped mid-way and started again;
 * then the CLI consumes more and stops on SIGTERM.
 */
describe('ackcrawl extract on Kafka, MinIO and PostgreSQL', () => {
  const topic = testTopicName();
  const bucket = testBucketName();
  const groupId = `test-extract-${randomUUID()}`;
  let pg: Awaited<ReturnType<typeof scratchPostgres>>;
  let store: SqlStore;
  let sink: KafkaSink;
  let config: ExtractConfig;
  const blobStore = createMinioBlobStore({ ...s3Settings, s3Bucket: bucket });
  const records: PageRecord[] = [];

  before(async () => {
    await requireKafka();
    await requireMinio();
    pg = await scratchPostgres();
    store = await openSqlStore(pg.url);
    sink = new KafkaSink({
      brokers: kafkaSettings.kafkaBrokers,
      topic,
      partitions: 3,
      bodyThresholdBytes: 64 * 1024,
      blobStore,
      logger: silentLogger(),
    });
    const pages = labelledPages();
    for (let copy = 0; copy < 3; copy += 1) {
      for (const page of pages) {
        records.push(
          pageRecordOf({ url: `https://${page.name}/${copy}`, html: page.html, jobId: 'job-x', runId: RUN }),
        );
      }
    }
    config = loadConfig(
      extractConfigSchema,
      {},
      {
        ...kafkaSettings,
        ...s3Settings,
        kafkaTopic: topic,
        s3Bucket: bucket,
        sqlUrl: pg.url,
        extractGroupId: groupId,
        extractChunkRecords: 3,
        logLevel: 'silent',
      },
    );
  });
  after(async () => {
    await sink?.close().catch(() => undefined);
    await store?.close();
    await blobStore.close();
    await deleteTopic(topic).catch(() => undefined);
    await removeBucket(bucket).catch(() => undefined);
    const admin = new Kafka({ brokers: [...kafkaSettings.kafkaBrokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
    await pg?.drop();
  });

  test('stopped mid-way and restarted: exactly one row per capture; poison logged and skipped', async () => {
    const write = (list: readonly PageRecord[]) =>
      sink.write(list.map((r) => ({ key: r.url, value: Buffer.from(JSON.stringify(r)) })));
    await write(records);
    await write(records.slice(0, 7)); // redelivered records: same capture ids
    const producer = new Kafka({
      brokers: [...kafkaSettings.kafkaBrokers],
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    const missing = {
      ...records[0],
      captureId: 'cap-missing-body',
      body: null,
      bodyRef: { store: 's3', bucket, key: `gone/${randomUUID()}`, sha256: '0'.repeat(64), bytes: 10 },
    };
    await producer.send({
      topic,
      messages: [
        { key: 'poison', value: '{"schema":"ackcrawl.page/3", this is not JSON' },
        { key: 'missing', value: JSON.stringify(missing) },
      ],
    });
    await producer.disconnect();
    const claimChecked = [];
    for await (const item of rawMinioClient().listObjectsV2(bucket, '', true)) claimChecked.push(item);
    assert.ok(claimChecked.length > 0, 'some bodies went to MinIO');

    // First consumer: its fourth chunk's commit waits until close() was called.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let upserts = 0;
    const holding = Object.create(store) as SqlStore;
    Object.defineProperty(holding, 'results', {
      value: {
        ...store.results,
        upsert: async (rows: readonly ResultRow[]) => {
          upserts += 1;
          if (upserts === 4) await held;
          return store.results.upsert(rows);
        },
      },
    });
    const first = await startExtract(config, { logger: silentLogger(), store: holding, blobStore });
    await waitFor(() => upserts === 4, { timeoutMs: 60_000, message: 'four chunks' });
    const closing = first.close();
    release();
    await closing;
    const partial = (await allResults(store)).length;
    assert.ok(partial > 0 && partial < records.length, `stopped mid-way: ${partial} of ${records.length}`);

    const second = await startExtract(config, { logger: silentLogger(), store, blobStore });
    try {
      await waitFor(
        async () =>
          (await allResults(store)).length === records.length && (await failures(store)).length === 2,
        {
          timeoutMs: 90_000,
          intervalMs: 200,
          message: 'every capture cleaned',
        },
      );
      // All offsets are committed once the last chunk is in SQL.
      const admin = new Kafka({
        brokers: [...kafkaSettings.kafkaBrokers],
        logLevel: logLevel.NOTHING,
      }).admin();
      await admin.connect();
      try {
        await waitFor(
          async () => {
            const ends = await admin.fetchTopicOffsets(topic);
            const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
            return ends.every(
              (e) => committed?.partitions.find((p) => p.partition === e.partition)?.offset === e.high,
            );
          },
          { timeoutMs: 30_000, intervalMs: 200, message: 'offsets committed to the end' },
        );
      } finally {
        await admin.disconnect();
      }
    } finally {
      await second.close();
    }
    const rows = await allResults(store);
    assert.deepEqual(new Set(rows.map((r) => r.captureId)), new Set(records.map((r) => r.captureId)));
    assert.equal(rows.length, records.length, 'one row per capture, duplicates and all');
    const guardian = rows.find((r) => r.url === 'https://theguardian.com.academics/1');
    assert.equal(guardian?.author, 'Richard Adams');
    assert.equal(guardian?.language, 'en');
    assert.match(guardian?.mainText ?? '', /second-class citizens/);
    const logged = await failures(store);
    assert.deepEqual(logged.map((f) => f.code).sort(), ['EXTRACT_BAD_RECORD', 'EXTRACT_BODY_MISSING']);
    assert.ok(logged.find((f) => f.code === 'EXTRACT_BODY_MISSING')?.captureId === 'cap-missing-body');
    assert.ok(logged.every((f) => f.source.startsWith(`kafka:${topic}:`)));
  });

  test('the CLI consumes what is new and stops cleanly on SIGTERM', async () => {
    const more = labelledPages()
      .slice(0, 4)
      .map((page) =>
        pageRecordOf({ url: `https://${page.name}/cli`, html: page.html, jobId: 'job-x', runId: RUN }),
      );
    await sink.write(more.map((r) => ({ key: r.url, value: Buffer.from(JSON.stringify(r)) })));
    const cli = startCli(['extract'], {
      ACKCRAWL_KAFKA_BROKERS: kafkaSettings.kafkaBrokers.join(','),
      ACKCRAWL_KAFKA_TOPIC: topic,
      ACKCRAWL_S3_BUCKET: bucket,
      ACKCRAWL_SQL_URL: pg.url,
      ACKCRAWL_EXTRACT_GROUP_ID: groupId,
      ACKCRAWL_LOG_LEVEL: 'info',
    });
    try {
      await waitFor(async () => (await allResults(store)).length === records.length + more.length, {
        timeoutMs: 60_000,
        intervalMs: 200,
        message: 'the new records cleaned',
      });
    } finally {
      cli.child.kill('SIGTERM');
    }
    const exit = await cli.done;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout + exit.stderr, /extract consumer stopped/);
    assert.equal(
      (await allResults(store)).length,
      records.length + more.length,
      'nothing read twice as a row',
    );
  });
});
