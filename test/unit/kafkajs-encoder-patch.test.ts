import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('kafkajs/package.json'));
const protocol = join(root, 'src', 'protocol');

interface Encoder {
  buffer: Buffer;
  writeInt32(value: number): Encoder;
  writeBytes(value: Buffer): Encoder;
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
});
