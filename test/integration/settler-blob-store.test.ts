import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { KafkaSink } from '../../shared/adapters/page-sink/kafka-sink.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import type { BlobStore } from '../../shared/ports/blob-store.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { Settler } from '../../scheduler/outcomes/settler.js';
import { pageRecord, sinkRecord } from '../contract/page-sink.contract.js';
import { deleteTopic, readTopic, testTopicName } from '../helpers/kafka-topic.js';
import { rawMinioClient, removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { kafkaSettings, requireKafka, requireMinio, s3Settings } from '../helpers/services.js';
import { waitFor } from '../helpers/wait-for.js';

/** A blob store whose backing store can be swapped, as an operator fixes a deployment's settings. */
function switchable(initial: BlobStore): BlobStore & { use(store: BlobStore): void } {
  let current = initial;
  return {
    get location() {
      return current.location;
    },
    use: (store) => (current = store),
    putContentAddressed: (body, options) => current.putContentAddressed(body, options),
    put: (key, body, options) => current.put(key, body, options),
    get: (key) => current.get(key),
    exists: (key) => current.exists(key),
    list: (prefix) => current.list(prefix),
    delete: (key) => current.delete(key),
    close: async () => undefined,
  };
}

describe('settler + Kafka sink + MinIO claim check', () => {
  it('a blob store refusing our credentials stalls the crawl with a clear error; no page fails', async () => {
    await requireKafka();
    await requireMinio();
    const topic = testTopicName();
    const bucket = testBucketName();
    const dir = mkdtempSync(join(tmpdir(), `settler-s3-${randomUUID()}-`));
    const wrong = createMinioBlobStore({ ...s3Settings, s3SecretKey: 'not-the-secret', s3Bucket: bucket });
    const right = createMinioBlobStore({ ...s3Settings, s3Bucket: bucket });
    const store = switchable(wrong);
    const sink = new KafkaSink({
      brokers: kafkaSettings.kafkaBrokers,
      topic,
      partitions: 1,
      blobStore: store,
      logger: pino({ level: 'silent' }),
    });
    const frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
    const lines: { msg: string; code?: string; endpoint?: string; bucket?: string }[] = [];
    const settler = new Settler({
      sink,
      frontier,
      logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }),
      maxTotal: 0,
      onSettled: () => undefined,
    });
    try {
      const urls = ['https://a.test/large', 'https://a.test/small'];
      await frontier.push(
        urls.map((url) => ({
          runId: 'default',
          url,
          host: 'a.test',
          depth: 0,
          priority: 0,
          parentUrl: null,
        })),
      );
      const [large, small] = await frontier.lease(2);
      assert.ok(large && small);
      const body = 'x'.repeat(700 * 1024);
      const largeRecord = pageRecord(large.url, 1, {
        body,
        bodyBytes: body.length,
        bodySha256: createHash('sha256').update(body).digest('hex'),
      });
      settler.ack(large, sinkRecord(largeRecord), [
        {
          runId: 'default',
          url: 'https://a.test/child',
          host: 'a.test',
          depth: 1,
          priority: -1,
          parentUrl: large.url,
        },
      ]);
      settler.ack(small, sinkRecord(pageRecord(small.url, 1)), []);

      await waitFor(() => lines.some((l) => l.code === 'BLOB_STORE_AUTH'), {
        timeoutMs: 20_000,
        message: 'the stall reported',
      });
      const report = lines.find((l) => l.code === 'BLOB_STORE_AUTH');
      assert.match(report?.msg ?? '', /refused the credentials/);
      assert.match(report?.msg ?? '', new RegExp(bucket));
      assert.equal(report?.endpoint, new URL(s3Settings.s3Endpoint).origin);
      assert.ok(!JSON.stringify(lines).includes('not-the-secret'), 'the secret is never logged');
      // Stalled: nothing settled, nothing failed, the leases still held.
      const stalled = await frontier.stats();
      assert.equal(stalled.done + stalled.failed, 0);
      assert.equal(stalled.leased, 2);

      store.use(right); // the operator fixes the credentials
      await settler.flush();
      const stats = await frontier.stats();
      assert.equal(stats.failed, 0, 'no page failed');
      assert.equal(stats.done, 2);
      assert.equal(stats.total, 3, 'the large page’s link was queued');
      assert.ok(lines.some((l) => /durable again/.test(l.msg)));

      const records = (await readTopic(topic, 2)).map((r) => JSON.parse(r.value.toString()) as PageRecord);
      const stored = records.find((r) => r.url === large.url);
      assert.equal(stored?.outcome, 'ok');
      assert.equal(stored?.body, null);
      const ref = stored?.bodyRef;
      assert.ok(ref, 'the body went to MinIO');
      const object = await rawMinioClient().getObject(bucket, ref.key);
      const chunks: Buffer[] = [];
      for await (const chunk of object) chunks.push(chunk as Buffer);
      assert.equal(createHash('sha256').update(Buffer.concat(chunks)).digest('hex'), ref.sha256);
    } finally {
      await settler.close();
      await sink.close();
      await frontier.close();
      await wrong.close();
      await right.close();
      await deleteTopic(topic);
      await removeBucket(bucket);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
