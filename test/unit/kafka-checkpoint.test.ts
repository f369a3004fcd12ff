import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatKafkaCheckpoint,
  parseKafkaCheckpoint,
  PartitionEnds,
  rangesAfter,
} from '../../shared/adapters/page-sink/kafka-checkpoint.js';

test('a checkpoint reads back as written; other sinks’ checkpoints are not Kafka checkpoints', () => {
  const text = formatKafkaCheckpoint({ topic: 'ackcrawl.pages', ends: [120, 0, 98] });
  assert.equal(text, '{"kafka":"ackcrawl.pages","ends":[120,0,98]}');
  assert.deepEqual(parseKafkaCheckpoint(text), { topic: 'ackcrawl.pages', ends: [120, 0, 98] });
  for (const other of [
    null,
    '3:1234',
    '{"kafka":1}',
    '{"kafka":"t","ends":[1,-2]}',
    '{"kafka":"t","ends":[1.5]}',
    '[]',
  ]) {
    assert.equal(parseKafkaCheckpoint(other), null, String(other));
  }
});

test('ranges after a checkpoint: to each partition’s end now, from its first record when older', () => {
  const now = [
    { partition: 0, low: 0, high: 130 },
    { partition: 1, low: 0, high: 40 },
    { partition: 2, low: 100, high: 150 },
    // Added after the checkpoint was written.
    { partition: 3, low: 0, high: 7 },
  ];
  assert.deepEqual(rangesAfter([120, 40, 90], now), [
    { partition: 0, from: 120, to: 130 },
    { partition: 2, from: 100, to: 150 },
    { partition: 3, from: 0, to: 7 },
  ]);
  assert.deepEqual(rangesAfter([130, 40, 150, 7], now), [], 'nothing written since');
});

test('partition ends follow produce answers: base offset plus the records sent there', () => {
  const ends = new PartitionEnds([10, 20, 30]);
  ends.confirm(
    [
      { partition: 0, baseOffset: '10' },
      { partition: 2, baseOffset: '35' },
    ],
    new Map([
      [0, 4],
      [2, 1],
    ]),
  );
  assert.deepEqual(ends.snapshot(), [14, 20, 36]);
  // Never backwards; an answer without an offset changes nothing.
  ends.confirm(
    [{ partition: 0, baseOffset: '3' }, { partition: 1 }, { partition: 1, baseOffset: '-1' }],
    new Map([[0, 1]]),
  );
  assert.deepEqual(ends.snapshot(), [14, 20, 36]);
  // A partition the sink did not expect records in counts one record: behind, never ahead.
  ends.confirm([{ partition: 1, baseOffset: '25' }], new Map());
  assert.deepEqual(ends.snapshot(), [14, 26, 36]);
});
