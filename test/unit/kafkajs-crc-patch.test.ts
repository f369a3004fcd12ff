import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';

const require = createRequire(import.meta.url);
const root = dirname(require.resolve('kafkajs/package.json'));
const dir = join(root, 'src', 'protocol', 'recordBatch', 'crc32C');
type Crc = (buffer: Buffer) => number;
/** What kafkajs checksums each record batch with (patched), and its own table-driven JavaScript. */
const patched = require(join(dir, 'index.js')) as Crc;
const table = require(join(dir, 'crc32C.js')) as Crc;

/** patches/kafkajs+2.2.4.patch: record batches are checksummed in hardware, to the same values. */
describe('the patched kafkajs CRC32C', () => {
  test('is the one installed (npm ci runs patch-package), and @node-rs/crc32 loads here', () => {
    assert.match(readFileSync(join(dir, 'index.js'), 'utf8'), /@node-rs\/crc32/);
    assert.equal(typeof (require('@node-rs/crc32') as { crc32c?: unknown }).crc32c, 'function');
  });

  test('gives the CRC32C of the standard check value, and the table-driven one for any buffer', () => {
    assert.equal(patched(Buffer.from('123456789')), 0xe3069283);
    assert.equal(patched(Buffer.alloc(0)), 0);
    for (const size of [1, 7, 8, 9, 63, 64, 65, 4_096, 1_000_003]) {
      const buffer = randomBytes(size);
      assert.equal(patched(buffer), table(buffer), `${size} bytes`);
    }
    // A view into a larger buffer (kafkajs hands its encoder's buffer slices): only the view counts.
    const big = randomBytes(1_024);
    const view = big.subarray(100, 900);
    assert.equal(patched(view), table(Buffer.from(view)));
  });
});
