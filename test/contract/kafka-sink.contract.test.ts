import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaSink, type KafkaSinkOptions } from '../../shared/adapters/page-sink/kafka-sink.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { restoreClaimChecks } from '../../shared/adapters/page-sink/claim-check-restore.js';
import { pino } from 'pino';
import { silentLogger } from '../../shared/logger.js';
import { storedPageRecordSchema } from '../../shared/protocol/page-record.js';
import {
  deleteTopic,
  readTopic,
  testTopicName,
  topicConfig,
  topicPartitions,
} from '../helpers/kafka-topic.js';
import { KAFKA_LOG_DIR, topicLogBytes } from '../../scripts/bench/kafka-log-bytes.js';
import { startStallingProxy } from '../helpers/stalling-proxy.js';
import { waitFor } from '../helpers/wait-for.js';
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

pageSinkContract('kafka sink, gzip batches (+ MinIO)', async () => {
  const fx = await kafkaFixture({ compression: 'gzip' });
  return {
    sink: fx.sink,
    readBack: (count) => readTopic(fx.topic, count),
    claimCheck: { blobStore: fx.blobStore, thresholdBytes: 512 * 1024 },
    cleanup: fx.cleanup,
  };
});

/** An HTML page of some 10 KB of varied words, as a crawl stores them. */
function htmlPage(seq: number): string {
  const words = ['crawler', 'politeness', 'frontier', 'kafka', 'record', 'page', 'link', 'host', 'queue'];
  const paragraphs = Array.from({ length: 60 }, (_, p) => {
    const text = Array.from({ length: 20 }, (_, w) => words[(seq * 7 + p * 3 + w * w) % words.length]);
    return `<p class="p${p % 5}">${text.join(' ')} <a href="/page/${seq}/${p}">more ${seq}-${p}</a></p>`;
  });
  return `<!doctype html><html><head><title>Page ${seq}</title></head><body>${paragraphs.join('\n')}</body></html>`;
}

describe('kafka sink: adapter specifics', () => {
  it('with gzip, the broker stores the same records in a fraction of the bytes', async () => {
    const plain = await kafkaFixture({ partitions: 2 });
    const gzipped = await kafkaFixture({ partitions: 2, compression: 'gzip' });
    try {
      const records = Array.from({ length: 300 }, (_, i) =>
        sinkRecord(pageRecord(`https://a.test/page/${i}`, i, { body: htmlPage(i) })),
      );
      const payload = records.reduce((sum, r) => sum + r.value.length, 0);
      assert.ok(payload > 2_500_000, `${payload} bytes of records`);
      // Two writes each, as a scheduler commits in turns.
      for (const fx of [plain, gzipped]) {
        await fx.sink.write(records.slice(0, 150));
        await fx.sink.write(records.slice(150));
      }
      for (const fx of [plain, gzipped]) {
        const stored = await readTopic(fx.topic, records.length);
        assert.deepEqual(
          stored.map((r) => r.value.toString()).sort(),
          records.map((r) => r.value.toString()).sort(),
          'every record back as written',
        );
      }
      const plainBytes = topicLogBytes(plain.topic);
      const gzipBytes = topicLogBytes(gzipped.topic);
      assert.ok(plainBytes !== null && gzipBytes !== null, `the topics' logs under ${KAFKA_LOG_DIR}`);
      assert.ok(plainBytes >= payload, `uncompressed: ${plainBytes} bytes on disk for ${payload}`);
      assert.ok(gzipBytes < plainBytes / 3, `gzip: ${gzipBytes} bytes on disk against ${plainBytes}`);
    } finally {
      await plain.cleanup();
      await gzipped.cleanup();
    }
  });

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

  it('recover returns the records written after a checkpoint, link lists read back', async () => {
    const fx = await kafkaFixture();
    try {
      const settled = await fx.sink.write([sinkRecord(pageRecord('https://a.test/settled', 1))]);
      assert.ok(settled);
      const links = Array.from({ length: 30_000 }, (_, i) => `https://a.test/a-rather-long-link/${i}`);
      const unsettled = [
        sinkRecord(pageRecord('https://a.test/huge', 2, { links })),
        sinkRecord(pageRecord('https://a.test/plain', 3, { links: ['https://a.test/x'] })),
      ];
      const last = await fx.sink.write(unsettled);
      await fx.sink.close();
      // A new sink, as after a scheduler restart.
      const again = new KafkaSink({
        brokers: kafkaSettings.kafkaBrokers,
        topic: fx.topic,
        blobStore: fx.blobStore,
        logger: silentLogger(),
      });
      try {
        const found = await again.recover(settled);
        assert.deepEqual(found.map((r) => r.key).sort(), ['https://a.test/huge', 'https://a.test/plain']);
        for (const record of found) {
          const written = unsettled.find((r) => r.key === record.key);
          assert.deepEqual(record.value, written?.value, `${record.key} as written`);
        }
        assert.deepEqual(await again.recover(last), [], 'nothing after the last write');
        assert.deepEqual(await again.recover(null), []);
      } finally {
        await again.close();
      }
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

  it('a send stalled past its deadline is abandoned: the retry starts after it ended, each record stored once', async () => {
    const proxy = await startStallingProxy(kafkaSettings.kafkaBrokers[0] as string);
    const fx = await kafkaFixture({
      socketFactory: proxy.socketFactory,
      writeTimeoutMs: 1_500,
      requestTimeoutMs: 20_000,
    });
    try {
      await fx.sink.write([sinkRecord(pageRecord('https://a.test/before', 1))]);
      const before = proxy.connections.length;
      proxy.stall();
      const batch = Array.from({ length: 20 }, (_, i) =>
        sinkRecord(pageRecord(`https://a.test/stalled-${i}`, i)),
      );
      const started = Date.now();
      await assert.rejects(fx.sink.write(batch), { code: 'SINK_TIMEOUT', retriable: true });
      const took = Date.now() - started;
      assert.ok(took >= 1_400 && took < 3_000, `failed at the send deadline (${took} ms)`);
      // Written again at once, as the settler does after a failure: it waits for the abandoned send.
      const retry = fx.sink.write(batch);
      const old = proxy.connections.slice(0, before);
      await waitFor(() => old.every((c) => c.closedAt !== null), {
        timeoutMs: 5_000,
        message: 'every connection of the abandoned producer closed',
      });
      // Kafka wakes up: what the abandoned producer sent into the stall was dropped with its connections.
      proxy.resume();
      await retry;
      const fresh = proxy.connections.slice(before);
      assert.ok(fresh.length > 0, 'the retry opened new connections (a new producer)');
      const lastOld = Math.max(...old.map((c) => c.closedAt ?? Infinity));
      assert.ok(
        fresh.every((c) => c.openedAt >= lastOld),
        'the retry connected only after the abandoned producer was gone',
      );
      const stored = await readTopic(fx.topic, 21);
      assert.deepEqual(
        stored.map((r) => r.key).sort(),
        ['https://a.test/before', ...batch.map((r) => r.key)].sort(),
        'every record once: the abandoned send never reached Kafka',
      );
    } finally {
      await fx.cleanup();
      await proxy.close();
    }
  });

  it('creates its topic with min.insync.replicas set, and warns of an existing one weaker than configured', async () => {
    const fx = await kafkaFixture();
    const warnings: string[] = [];
    try {
      await fx.sink.start();
      assert.deepEqual(await topicConfig(fx.topic, 'min.insync.replicas'), { value: '1', isDefault: false });
      const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
      const other = new KafkaSink({
        brokers: kafkaSettings.kafkaBrokers,
        topic: fx.topic,
        replicationFactor: 3,
        blobStore: fx.blobStore,
        logger,
      });
      await other.start();
      await other.close();
      assert.ok(
        warnings.some((w) =>
          /less durable than configured: it has 1 replicas where 3 are configured/.test(w),
        ),
        warnings.join('\n'),
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
