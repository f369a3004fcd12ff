import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaSink, type KafkaSinkOptions } from '../../shared/adapters/page-sink/kafka-sink.js';
import { createMinioBlobStore } from '../../shared/config/s3-settings.js';
import { restoreClaimChecks } from '../../shared/adapters/page-sink/claim-check-restore.js';
import { silentLogger } from '../../shared/logger.js';
import { storedPageRecordSchema } from '../../shared/protocol/page-record.js';
import { deleteTopic, readTopic, testTopicName, topicPartitions } from '../helpers/kafka-topic.js';
import { removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { kafkaSettings, requireKafka, requireMinio, s3Settings } from '../helpers/services.js';
import { pageRecord, pageSinkContract, sinkRecord } from './page-sink.contract.js';

/** A sink on a fresh topic, with large bodies going to a fresh MinIO bucket; removes both after. */
async function kafkaFixture(options: Partial<KafkaSinkOptions> = {}) {
  await requireKafka();
  await requireMinio();
  const topic = testTopicName();
  const bucket = testBucketName();
  const blobStore = createMinioBlobStore({ ...s3Settings, s3Bucket: bucket });
  const sink = new KafkaSink({
    brokers: kafkaSettings.kafkaBrokers,
    topic,
    partitions: 3,
    blobStore,
    logger: silentLogger(),
    ...options,
  });
  return {
    topic,
    sink,
    blobStore,
    cleanup: async () => {
      await sink.close();
      await blobStore.close();
      await deleteTopic(topic);
      await removeBucket(bucket);
    },
  };
}

pageSinkContract('kafka sink (+ MinIO)', async () => {
  const fx = await kafkaFixture();
  return {
    sink: fx.sink,
    readBack: (count) => readTopic(fx.topic, count),
    claimCheck: { blobStore: fx.blobStore, thresholdBytes: 512 * 1024 },
    cleanup: fx.cleanup,
  };
});

describe('kafka sink: adapter specifics', () => {
  it('creates a missing topic with the configured partition count', async () => {
    const fx = await kafkaFixture({ partitions: 4 });
    try {
      await fx.sink.start();
      assert.equal(await topicPartitions(fx.topic), 4);
      // A second sink on the same topic uses it as it is.
      const other = new KafkaSink({
        brokers: kafkaSettings.kafkaBrokers,
        topic: fx.topic,
        partitions: 9,
        blobStore: fx.blobStore,
        logger: silentLogger(),
      });
      await other.write([sinkRecord(pageRecord('https://a.test/', 1))]);
      await other.close();
      assert.equal(await topicPartitions(fx.topic), 4);
    } finally {
      await fx.cleanup();
    }
  });

  it('recover returns nothing: Kafka delivery is at-least-once', async () => {
    const fx = await kafkaFixture();
    try {
      await fx.sink.write([sinkRecord(pageRecord('https://a.test/', 1))]);
      assert.deepEqual(await fx.sink.recover(null), []);
    } finally {
      await fx.cleanup();
    }
  });

  it('splits a write too large for one batch into several sends, in order', async () => {
    const fx = await kafkaFixture({ partitions: 1 });
    try {
      // 300 records of ~10 KB on one partition: over 1 MB, so at least three sends.
      const records = Array.from({ length: 300 }, (_, i) =>
        sinkRecord(pageRecord(`https://a.test/${i % 7}`, i, { body: 'x'.repeat(10_000) })),
      );
      await fx.sink.write(records);
      const stored = await readTopic(fx.topic, 300);
      assert.deepEqual(
        stored.map((r) => r.value.toString()),
        records.map((r) => r.value.toString()),
      );
    } finally {
      await fx.cleanup();
    }
  });

  it('a record too large even without its body has its link lists moved too, and reads back whole', async () => {
    const fx = await kafkaFixture();
    try {
      const links = Array.from({ length: 30_000 }, (_, i) => `https://a.test/a-rather-long-link/${i}`);
      const record = pageRecord('https://a.test/huge', 1, { links, nofollowLinks: links.slice(0, 3) });
      const value = sinkRecord(record);
      assert.ok(value.value.length > 1_000_000);
      await fx.sink.write([value]);
      const [stored] = await readTopic(fx.topic, 1);
      assert.ok(stored);
      const parsed = storedPageRecordSchema.parse(JSON.parse(stored.value.toString('utf8')));
      assert.equal(parsed.links, null);
      assert.equal(parsed.nofollowLinks, null);
      assert.equal(parsed.linksRef?.links, 30_000);
      assert.equal(parsed.linksRef?.nofollowLinks, 3);
      assert.equal(parsed.body, record.body, 'a small body stays inline');
      assert.deepEqual(await restoreClaimChecks(stored.value, fx.blobStore), value.value);
    } finally {
      await fx.cleanup();
    }
  });

  it('refuses a record too large without its body and links, and stays usable', async () => {
    const fx = await kafkaFixture();
    try {
      const headers = { 'x-huge': 'h'.repeat(1_100_000) };
      await assert.rejects(fx.sink.write([sinkRecord(pageRecord('https://a.test/huge', 1, { headers }))]), {
        name: 'StorageError',
        code: 'SINK_RECORD_TOO_LARGE',
        retriable: false,
      });
      await fx.sink.write([sinkRecord(pageRecord('https://a.test/fine', 2))]);
      assert.deepEqual(
        (await readTopic(fx.topic, 1)).map((r) => r.key),
        ['https://a.test/fine'],
      );
    } finally {
      await fx.cleanup();
    }
  });

  it('fails with a retriable error within the write deadline when no broker answers', async () => {
    const blobStore = createMinioBlobStore({ ...s3Settings, s3Bucket: testBucketName() });
    // Nothing listens on port 1: every connection is refused.
    const sink = new KafkaSink({
      brokers: ['127.0.0.1:1'],
      topic: testTopicName(),
      blobStore,
      writeTimeoutMs: 2_000,
      logger: silentLogger(),
    });
    const started = Date.now();
    await assert.rejects(sink.write([sinkRecord(pageRecord('https://a.test/', 1))]), (err: unknown) => {
      assert.ok(err instanceof Error && 'retriable' in err && err.retriable === true, String(err));
      assert.match(String((err as { code?: unknown }).code), /^SINK_(UNAVAILABLE|TIMEOUT)$/);
      return true;
    });
    assert.ok(Date.now() - started < 4_000, `took ${Date.now() - started} ms`);
    const closing = Date.now();
    await sink.close();
    assert.ok(Date.now() - closing < 2_000, 'close does not wait for a start that is still retrying');
    await blobStore.close();
  });
});
