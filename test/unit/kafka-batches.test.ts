import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageBytes, splitIntoSends } from '../../shared/adapters/page-sink/kafka-batches.js';

const msg = (key: string, size: number) => ({ key: Buffer.from(key), value: Buffer.alloc(size) });
const partitionOf = (key: Buffer): number => Number(key.toString().slice(1));

test('one send when everything fits', () => {
  const messages = [msg('p0', 100), msg('p1', 100), msg('p0', 100)];
  const sends = splitIntoSends(messages, partitionOf, { maxPartitionBytes: 1_000, maxRequestBytes: 10_000 });
  assert.equal(sends.length, 1);
  assert.equal(sends[0]?.length, 3);
});

test('splits when one partition would exceed its limit, keeping the order', () => {
  // 466 to 470 bytes each with framing: two fit in 942, three do not.
  const messages = Array.from({ length: 5 }, (_, i) => msg('p0', 400 + i));
  assert.equal(messageBytes(messages[0] as { key: Buffer; value: Buffer }), 466);
  const sends = splitIntoSends(messages, partitionOf, { maxPartitionBytes: 942, maxRequestBytes: 1e9 });
  assert.deepEqual(
    sends.map((s) => s.map((m) => (m.value as Buffer).length)),
    [[400, 401], [402, 403], [404]],
  );
});

test('different partitions share a send up to the request limit', () => {
  const messages = Array.from({ length: 6 }, (_, i) => msg(`p${i}`, 900));
  const perPartition = splitIntoSends(messages, partitionOf, {
    maxPartitionBytes: 1_000,
    maxRequestBytes: 1e9,
  });
  assert.equal(perPartition.length, 1);
  const perRequest = splitIntoSends(messages, partitionOf, {
    maxPartitionBytes: 1_000,
    maxRequestBytes: 3_000,
  });
  assert.deepEqual(
    perRequest.map((s) => s.length),
    [3, 3],
  );
});

test('a message larger than the limit goes alone', () => {
  const sends = splitIntoSends([msg('p0', 10), msg('p0', 5_000), msg('p0', 10)], partitionOf, {
    maxPartitionBytes: 1_000,
    maxRequestBytes: 1e9,
  });
  assert.deepEqual(
    sends.map((s) => s.length),
    [1, 1, 1],
  );
});

test('no messages, no sends', () => {
  assert.deepEqual(splitIntoSends([], partitionOf, { maxPartitionBytes: 1, maxRequestBytes: 1 }), []);
});
