import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatKafkaCheckpoint,
  parseKafkaCheckpoint,
} from '../../shared/adapters/page-sink/kafka-checkpoint.js';
import { KafkaSink, type KafkaSinkOptions } from '../../shared/adapters/page-sink/kafka-sink.js';
import { silentLogger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { FakeKafkaTransport } from '../helpers/fake-kafka-transport.js';
import { MemoryBlobStore } from '../helpers/memory-blob-store.js';

const TOPIC = 'unit.pages';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function records(n: number, bytes = 100, prefix = 'p'): SinkRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `https://a.test/${prefix}${i}`,
    value: Buffer.from(JSON.stringify({ url: `https://a.test/${prefix}${i}`, pad: 'x'.repeat(bytes) })),
  }));
}

function sinkOn(transport: FakeKafkaTransport, options: Partial<KafkaSinkOptions> = {}) {
  const blobStore = new MemoryBlobStore();
  const sink = new KafkaSink({
    brokers: [],
    topic: TOPIC,
    blobStore,
    transport,
    writeTimeoutMs: 300,
    logger: silentLogger(),
    ...options,
  });
  return { sink, blobStore };
}

describe('kafka sink: sends and their deadlines', () => {
  test('each send of a large write has its own deadline, so a write may take longer than one', async () => {
    const transport = new FakeKafkaTransport(1);
    transport.behave = () => sleep(150);
    // 30 records of ~1 KB on one partition, at most 10 KB per send: three or more sends of 150 ms.
    const { sink } = sinkOn(transport, { maxMessageBytes: 10_000, writeTimeoutMs: 400 });
    const started = performance.now();
    await sink.write(records(30, 1_000));
    assert.ok(transport.sends.length >= 3, `${transport.sends.length} sends`);
    assert.ok(performance.now() - started > 400, 'longer than one deadline in all');
    assert.equal(transport.keys().length, 30);
    await sink.close();
  });

  test('sends are bounded in bytes, per partition and per request', async () => {
    const transport = new FakeKafkaTransport(4);
    const { sink } = sinkOn(transport, { maxMessageBytes: 5_000, maxRequestBytes: 12_000 });
    await sink.write(records(60, 900));
    assert.ok(transport.sends.length >= 5, `${transport.sends.length} sends`);
    for (const send of transport.sends) assert.ok(send.bytes <= 12_000, `${send.bytes} bytes in one send`);
    assert.equal(transport.keys().length, 60);
    await sink.close();
  });

  test('a send past its deadline is abandoned; the next write waits until it ended, on a new producer', async () => {
    const transport = new FakeKafkaTransport(1);
    // The first send hangs until its producer is abandoned, then takes 200 ms more to give up.
    transport.behave = async ({ producer, n }) => {
      if (n !== 1) return;
      await producer.untilAbandoned();
      await sleep(200);
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 250 });
    const batch = records(5);
    const started = performance.now();
    await assert.rejects(sink.write(batch), { code: 'SINK_TIMEOUT', retriable: true });
    const failedAfter = performance.now() - started;
    assert.ok(
      failedAfter >= 240 && failedAfter < 400,
      `the write failed at its deadline (${failedAfter} ms)`,
    );
    // The caller writes the same records again at once, as the settler does.
    await sink.write(batch);
    const [abandoned, retried] = transport.sends;
    assert.ok(abandoned && retried);
    assert.equal(abandoned.result, 'failed');
    assert.ok(retried.startedAt >= abandoned.endedAt, 'the retry started after the abandoned send ended');
    assert.equal(transport.maxActive, 1, 'never two sends at once');
    assert.equal(retried.producer, 1, 'on a new producer');
    assert.ok(transport.producers[0]?.abandoned && transport.producers[0].disconnected);
    assert.deepEqual(transport.keys().sort(), batch.map((r) => r.key).sort(), 'each record once');
    await sink.close();
  });

  test('close waits for an abandoned send to end', async () => {
    const transport = new FakeKafkaTransport();
    let ended = false;
    transport.behave = async ({ producer }) => {
      await producer.untilAbandoned();
      await sleep(150);
      ended = true;
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 100 });
    await assert.rejects(sink.write(records(1)), { code: 'SINK_TIMEOUT' });
    await sink.close();
    assert.equal(ended, true);
  });

  test('retriable failures are tried again with the same producer until the deadline', async () => {
    const transport = new FakeKafkaTransport(1);
    transport.behave = ({ n }) => {
      if (n <= 2)
        throw Object.assign(new Error('leader moved'), {
          name: 'KafkaJSProtocolError',
          type: 'NOT_LEADER_FOR_PARTITION',
          retriable: true,
        });
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 2_000 });
    await sink.write(records(3));
    assert.equal(transport.sends.length, 3);
    assert.equal(transport.producers.length, 1);
    assert.equal(transport.keys().length, 3);
    await sink.close();
  });

  test('retriable failures that last past the deadline fail the write without abandoning anything', async () => {
    const transport = new FakeKafkaTransport();
    transport.behave = () => {
      throw Object.assign(new Error('down'), { name: 'KafkaJSConnectionError', retriable: true });
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 300 });
    await assert.rejects(sink.write(records(1)), { code: 'SINK_UNAVAILABLE', retriable: true });
    assert.equal(transport.producers[0]?.abandoned, false);
    await sink.close();
  });

  test("a send is a request per partition, all at once; a partition's failed request is tried again alone", async () => {
    const transport = new FakeKafkaTransport(3);
    const batch = records(30);
    const failing = transport.partitionOf(batch[0]?.key as string);
    let failures = 0;
    // The leader of one partition is gone for its first two requests; the others answer at once.
    transport.behave = async ({ partition }) => {
      await sleep(20);
      if (partition === failing && failures++ < 2)
        throw Object.assign(new Error('Connection error: connect ECONNREFUSED'), {
          name: 'KafkaJSConnectionError',
          retriable: true,
        });
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 2_000 });
    await sink.write(batch);
    assert.deepEqual(transport.keys().sort(), batch.map((r) => r.key).sort(), 'each record once');
    const perPartition = (p: number): number => transport.sends.filter((s) => s.partition === p).length;
    assert.equal(perPartition(failing), 3, 'the failing partition: two failures, then stored');
    for (const p of [0, 1, 2].filter((p) => p !== failing))
      assert.equal(perPartition(p), 1, `partition ${p} once`);
    assert.equal(transport.maxActive, 3, 'the three partitions were sent to at once');
    assert.equal(transport.producers.length, 1);
    await sink.close();
  });

  test('a send whose partition fails for good keeps what the other partitions stored', async () => {
    const transport = new FakeKafkaTransport(3);
    const batch = records(30);
    const failing = transport.partitionOf(batch[0]?.key as string);
    let down = true;
    transport.behave = ({ partition }) => {
      if (down && partition === failing)
        throw Object.assign(new Error('Connection error: connect ECONNREFUSED'), {
          name: 'KafkaJSConnectionError',
          retriable: true,
        });
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 300 });
    await assert.rejects(sink.write(batch), { code: 'SINK_UNAVAILABLE', retriable: true });
    const stored = transport.keys().length;
    assert.ok(stored > 0 && stored < 30, `${stored} records stored by the partitions that answered`);
    down = false;
    await sink.write(batch);
    assert.deepEqual(transport.keys().sort(), batch.map((r) => r.key).sort(), 'each record once');
    await sink.close();
  });

  test("a partition's request past the deadline is abandoned; what the others stored is not sent again", async () => {
    const transport = new FakeKafkaTransport(3);
    const batch = records(30);
    const stalled = transport.partitionOf(batch[0]?.key as string);
    transport.behave = async ({ producer, partition }) => {
      if (producer.id === 0 && partition === stalled) await producer.untilAbandoned();
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 200 });
    await assert.rejects(sink.write(batch), { code: 'SINK_TIMEOUT', retriable: true });
    await sink.write(batch);
    assert.deepEqual(transport.keys().sort(), batch.map((r) => r.key).sort(), 'each record once');
    const retried = transport.sends.filter((s) => s.producer === 1);
    assert.deepEqual(
      retried.map((s) => s.partition),
      [stalled],
      'the new producer sent only the stalled partition',
    );
    await sink.close();
  });

  test('a write that failed half way does not send its stored part again when written again', async () => {
    const transport = new FakeKafkaTransport(1);
    transport.behave = ({ n }) => {
      if (n === 2)
        throw Object.assign(new Error('too large'), {
          name: 'KafkaJSProtocolError',
          type: 'MESSAGE_TOO_LARGE',
          retriable: false,
        });
    };
    const { sink } = sinkOn(transport, { maxMessageBytes: 3_000 });
    const batch = records(9, 900);
    await assert.rejects(sink.write(batch), { code: 'SINK_RECORD_TOO_LARGE' });
    const afterFailure = transport.keys().length;
    assert.ok(afterFailure > 0 && afterFailure < 9, `${afterFailure} stored by the first send`);
    await sink.write(batch);
    assert.deepEqual(
      transport.keys(),
      batch.map((r) => r.key),
      'every record once, in order',
    );
    // Written again after a success, records are sent again: only a failed write's part is remembered.
    await sink.write(batch.slice(0, 1));
    assert.equal(transport.keys().length, 10);
    await sink.close();
  });

  test('a topic not served by every broker yet is asked again at start; another error fails it at once', async () => {
    const transport = new FakeKafkaTransport();
    const served = transport.offsets.bind(transport);
    let calls = 0;
    transport.offsets = async () => {
      calls += 1;
      if (calls <= 2)
        throw Object.assign(new Error('This server does not host this topic-partition'), {
          name: 'KafkaJSProtocolError',
          type: 'UNKNOWN_TOPIC_OR_PARTITION',
          retriable: true,
        });
      return served();
    };
    const { sink } = sinkOn(transport, { writeTimeoutMs: 2_000 });
    await sink.start();
    assert.equal(calls, 3);
    await sink.close();

    const refused = new FakeKafkaTransport();
    let refusedCalls = 0;
    refused.offsets = async () => {
      refusedCalls += 1;
      throw Object.assign(new Error('not allowed'), {
        name: 'KafkaJSProtocolError',
        type: 'TOPIC_AUTHORIZATION_FAILED',
        retriable: false,
      });
    };
    const other = sinkOn(refused, { writeTimeoutMs: 2_000 }).sink;
    await assert.rejects(other.start(), { code: 'SINK_AUTH' });
    assert.equal(refusedCalls, 1);
    await other.close();
  });

  test('connecting is bounded by the deadline too', async () => {
    const transport = new FakeKafkaTransport();
    transport.prepare = () => new Promise(() => undefined);
    const { sink } = sinkOn(transport, { writeTimeoutMs: 200 });
    const started = performance.now();
    await assert.rejects(sink.write(records(1)), { code: 'SINK_TIMEOUT', retriable: true });
    assert.ok(performance.now() - started < 400);
    await sink.close();
  });
});

describe('kafka sink: checkpoints and recovery', () => {
  test('the checkpoint is where this sink’s writes end in each partition', async () => {
    const transport = new FakeKafkaTransport(3);
    transport.logs[0]?.push(...records(5, 10, 'old'));
    const { sink } = sinkOn(transport);
    assert.equal(await sink.write([]), null, 'nothing written yet: no checkpoint');
    const checkpoint = parseKafkaCheckpoint(await sink.write(records(20)));
    assert.deepEqual(checkpoint, { topic: TOPIC, ends: transport.logs.map((log) => log.length) });
    assert.equal(await sink.write([]), formatKafkaCheckpoint(checkpoint as NonNullable<typeof checkpoint>));
    await sink.close();
  });

  test('recover returns what was written after the checkpoint, link lists read back', async () => {
    const transport = new FakeKafkaTransport(3);
    const first = sinkOn(transport);
    const checkpoint = await first.sink.write(records(12, 10, 'settled'));
    // A sitemap whose links went to the blob store, then a crash before its batch settled.
    const links = Array.from({ length: 20_000 }, (_, i) => `https://a.test/products/item-${i}.html`);
    const sitemap = {
      key: 'https://a.test/sitemap.xml',
      value: Buffer.from(
        JSON.stringify({ url: 'https://a.test/sitemap.xml', outcome: 'ok', links, nofollowLinks: [] }),
      ),
    };
    const unsettled = [...records(4, 10, 'unsettled'), sitemap];
    await first.sink.write(unsettled);
    const stored = transport.logs.flat().find((r) => r.key === sitemap.key);
    assert.match(stored?.value.toString() ?? '', /"links":null.*"linksRef"/, 'stored with a linksRef');
    await first.sink.close();

    const again = new KafkaSink({
      brokers: [],
      topic: TOPIC,
      blobStore: first.blobStore,
      transport,
      logger: silentLogger(),
    });
    const found = await again.recover(checkpoint);
    assert.deepEqual(found.map((r) => r.key).sort(), unsettled.map((r) => r.key).sort());
    const restored = found.find((r) => r.key === sitemap.key);
    assert.deepEqual((JSON.parse(restored?.value.toString() ?? '{}') as { links: string[] }).links, links);
    assert.deepEqual(await again.recover(null), []);
    assert.deepEqual(await again.recover('3:1234'), [], 'a file sink checkpoint');
    assert.deepEqual(await again.recover(formatKafkaCheckpoint({ topic: 'other', ends: [0, 0, 0] })), []);
    await again.close();
  });

  test('after recovery, partitions this sink has not written to keep the old checkpoint', async () => {
    const transport = new FakeKafkaTransport(2);
    const key0 = Array.from({ length: 50 }, (_, i) => `https://a.test/k${i}`).find(
      (k) => transport.partitionOf(k) === 0,
    );
    const key1 = Array.from({ length: 50 }, (_, i) => `https://a.test/k${i}`).find(
      (k) => transport.partitionOf(k) === 1,
    );
    assert.ok(key0 && key1);
    transport.logs[0]?.push(...records(5, 10, 'x'));
    const { sink } = sinkOn(transport);
    const found = await sink.recover(formatKafkaCheckpoint({ topic: TOPIC, ends: [2, 0] }));
    assert.equal(found.length, 3);
    const checkpoint = parseKafkaCheckpoint(await sink.write([{ key: key1, value: Buffer.from('{}') }]));
    assert.deepEqual(checkpoint?.ends, [2, 1], 'partition 0 still from 2: its 3 records may be unsettled');
    await sink.close();
  });

  test('recovery reads within a byte limit and fails soft', async () => {
    const transport = new FakeKafkaTransport(1);
    transport.logs[0]?.push(...records(10, 1_000));
    const { sink } = sinkOn(transport, { maxRecoverBytes: 5_500 });
    const found = await sink.recover(formatKafkaCheckpoint({ topic: TOPIC, ends: [0] }));
    assert.equal(found.length, 5);
    transport.offsets = () => Promise.reject(new Error('Kafka is down'));
    assert.deepEqual(await sink.recover(formatKafkaCheckpoint({ topic: TOPIC, ends: [0] })), []);
    await sink.close();
  });
});
