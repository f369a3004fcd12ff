import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { crc32c } from '@node-rs/crc32';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('kafkajs/package.json'));
const protocol = join(root, 'src', 'protocol');

interface Encoder {
  buffer: Buffer;
  size(): number;
  pieces(): Buffer[];
  writeInt32(value: number): Encoder;
  writeBytes(value: Buffer): Encoder;
  writeEncoder(value: Encoder): Encoder;
}
type EncoderClass = new (initialSize?: number) => Encoder;
type RecordFn = (r: {
  offsetDelta: number;
  timestampDelta: number;
  key: Buffer;
  value: Buffer;
  headers?: Record<string, Buffer>;
}) => Encoder;
type RecordBatchFn = (b: {
  firstTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
  records: Encoder[];
}) => Promise<Encoder>;
interface DecodedBatch {
  records: { key: Buffer; value: Buffer; headers: Record<string, Buffer>; offset: string }[];
}

const EncoderOf = require(join(protocol, 'encoder.js')) as EncoderClass;
const Record = require(join(protocol, 'recordBatch', 'record', 'v0', 'index.js')) as RecordFn;
const { RecordBatch } = require(join(protocol, 'recordBatch', 'v0', 'index.js')) as {
  RecordBatch: RecordBatchFn;
};
const Decoder = require(join(protocol, 'decoder.js')) as new (buffer: Buffer) => unknown;
const createRequest = require(join(protocol, 'request.js')) as (r: {
  correlationId: number;
  clientId: string;
  request: unknown;
}) => Promise<Encoder>;
const ProduceV3 = require(join(protocol, 'requests', 'produce', 'v3', 'request.js')) as (p: {
  acks: number;
  timeout: number;
  topicData: {
    topic: string;
    partitions: { partition: number; firstSequence: number; messages: { key: Buffer; value: Buffer }[] }[];
  }[];
}) => unknown;
const decodeBatch = require(join(protocol, 'recordBatch', 'v0', 'decoder.js')) as (
  d: unknown,
) => Promise<DecodedBatch>;

/** Leaves garbage where unzeroed buffers come from: the pool and freed heap blocks. */
function dirtyTheHeap(): void {
  for (let i = 0; i < 64; i++) Buffer.allocUnsafe(1 + i * 997).fill(0xab);
  for (const size of [16_384, 65_536, 1 << 20, 4 << 20]) Buffer.allocUnsafe(size).fill(0xcd);
}

/** A record batch of `values` (first offset, size, batch), and the batch wrapped once more as a request wraps it. */
async function encodeBatch(values: Buffer[]): Promise<{ batch: Buffer; wrapped: Buffer }> {
  const records = values.map((value, i) =>
    Record({
      offsetDelta: i,
      timestampDelta: i,
      key: Buffer.from(`k${i}`),
      value,
      headers: { run: Buffer.from('r1') },
    }),
  );
  const batch = await RecordBatch({
    firstTimestamp: 1_700_000_000_000,
    maxTimestamp: 1_700_000_000_099,
    lastOffsetDelta: values.length - 1,
    records,
  });
  // A produce request wraps it in more encoders, each grown by copying.
  return { batch: batch.buffer, wrapped: new EncoderOf().writeInt32(7).writeBytes(batch.buffer).buffer };
}

/** Reads a produce request (v3) as a broker would: header, topics, partitions, record batches. */
async function readProduceRequest(bytes: Buffer): Promise<{
  size: number;
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  topics: { topic: string; partitions: { partition: number; crcOk: boolean; batch: DecodedBatch }[] }[];
}> {
  let at = 0;
  const int16 = (): number => ((at += 2), bytes.readInt16BE(at - 2));
  const int32 = (): number => ((at += 4), bytes.readInt32BE(at - 4));
  const string = (): string | null => {
    const length = int16();
    if (length < 0) return null;
    at += length;
    return bytes.toString('utf8', at - length, at);
  };
  const size = int32();
  const apiKey = int16();
  const apiVersion = int16();
  const correlationId = int32();
  string(); // client id
  string(); // transactional id
  int16(); // acks
  int32(); // timeout
  const topics = [];
  for (let t = int32(); t > 0; t--) {
    const topic = string() ?? '';
    const partitions = [];
    for (let p = int32(); p > 0; p--) {
      const partition = int32();
      const setSize = int32();
      const set = bytes.subarray(at, at + setSize);
      at += setSize;
      // firstOffset 8, length 4, leader epoch 4, magic 1, then the CRC of everything after it.
      const crcOk = set.readUInt32BE(17) === crc32c(set.subarray(21)) >>> 0;
      partitions.push({ partition, crcOk, batch: await decodeBatch(new Decoder(set)) });
    }
    topics.push({ topic, partitions });
  }
  assert.equal(at, bytes.length, 'nothing after the last topic');
  return { size, apiKey, apiVersion, correlationId, topics };
}

/** patches/kafkajs+2.2.4.patch: kafkajs's encoder grows into buffers it does not zero first. */
describe('the patched kafkajs encoder', () => {
  test('is the one installed (npm ci runs patch-package)', () => {
    const source = readFileSync(join(protocol, 'encoder.js'), 'utf8');
    assert.match(source, /ackcrawl patch/);
    assert.doesNotMatch(source, /Buffer\.alloc\(/, 'no zero-filled allocation left in the encoder');
  });

  test('a record batch encodes to the same bytes on a dirty heap, and decodes to what went in', async () => {
    // Records from a few bytes to past the encoder's growth steps, as the scheduler's pages are.
    const values = [0, 1, 500, 511, 512, 10_000, 70_000, 300_000].map((size) => randomBytes(size));
    const clean = await encodeBatch(values);
    for (let round = 0; round < 3; round++) {
      dirtyTheHeap();
      const again = await encodeBatch(values);
      assert.ok(again.batch.equals(clean.batch), `round ${round}: the same batch`);
      assert.ok(again.wrapped.equals(clean.wrapped), `round ${round}: the same request bytes`);
    }
    const decoded = await decodeBatch(new Decoder(clean.batch));
    assert.equal(decoded.records.length, values.length);
    decoded.records.forEach((r, i) => {
      assert.ok(r.value.equals(values[i] as Buffer), `record ${i}: its value`);
      assert.equal(r.key.toString(), `k${i}`);
      assert.equal(r.headers.run?.toString(), 'r1');
    });
  });

  test('a produce request carries every record, checksummed, with each large value copied once', async () => {
    const values = [3, 4095, 4096, 10_000, 10_000, 250_000, 7].map((size) => randomBytes(size));
    const messages = values.map((value, i) => ({ key: Buffer.from(`page-${i}`), value }));
    const request = ProduceV3({
      acks: -1,
      timeout: 30_000,
      topicData: [
        {
          topic: 'pages',
          partitions: [
            { partition: 0, firstSequence: 0, messages: messages.slice(0, 4) },
            { partition: 5, firstSequence: 9, messages: messages.slice(4) },
          ],
        },
      ],
    });
    const encoder = await createRequest({ correlationId: 42, clientId: 'ackcrawl', request });
    // Before the request is joined into one buffer to be written, its large values are the
    // caller's own buffers: kept by reference at every layer, not copied.
    const pieces = encoder.pieces();
    for (const value of values.filter((v) => v.length >= 4096)) {
      assert.ok(
        pieces.some(
          (p) => p.buffer === value.buffer && p.byteOffset === value.byteOffset && p.length === value.length,
        ),
        `the ${value.length}-byte value is referenced, not copied`,
      );
    }
    dirtyTheHeap();
    const bytes = encoder.buffer;
    assert.equal(bytes.length, encoder.size());
    assert.ok(encoder.buffer.buffer === bytes.buffer, 'joined once, then kept');
    const read = await readProduceRequest(bytes);
    assert.equal(read.size, bytes.length - 4);
    assert.deepEqual([read.apiKey, read.apiVersion, read.correlationId], [0, 3, 42]);
    assert.equal(read.topics.length, 1);
    assert.equal(read.topics[0]?.topic, 'pages');
    const partitions = read.topics[0]?.partitions ?? [];
    assert.deepEqual(
      partitions.map((p) => [p.partition, p.crcOk, p.batch.records.length]),
      [
        [0, true, 4],
        [5, true, 3],
      ],
    );
    const got = partitions.flatMap((p) => p.batch.records);
    got.forEach((r, i) => {
      assert.equal(r.key.toString(), `page-${i}`);
      assert.ok(r.value.equals(values[i] as Buffer), `record ${i}: its value`);
    });
  });

  test('an encoder written after a large buffer keeps appending in order', () => {
    const big = randomBytes(5000);
    const inner = new EncoderOf().writeInt32(1).writeBytes(big).writeInt32(2);
    const outer = new EncoderOf()
      .writeInt32(0)
      .writeEncoder(inner)
      .writeInt32(3)
      .writeBytes(big)
      .writeInt32(4);
    const expected = Buffer.concat([
      Buffer.from([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x13, 0x88]),
      big,
      Buffer.from([0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0x13, 0x88]),
      big,
      Buffer.from([0, 0, 0, 4]),
    ]);
    assert.equal(outer.size(), expected.length);
    assert.ok(outer.buffer.equals(expected));
    // Written to after it was joined, it still appends.
    outer.writeInt32(5);
    assert.ok(outer.buffer.equals(Buffer.concat([expected, Buffer.from([0, 0, 0, 5])])));
  });
});
