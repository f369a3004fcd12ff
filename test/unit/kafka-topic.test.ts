import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  durabilityProblems,
  minInsyncReplicasFor,
  topicConfigEntries,
} from '../../shared/adapters/page-sink/kafka-topic.js';

test('min.insync.replicas is all replicas but one, at least one', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((rf) => minInsyncReplicasFor(rf)),
    [1, 1, 2, 3, 4],
  );
});

test('a topic the sink creates always sets min.insync.replicas, also below three replicas', () => {
  assert.deepEqual(topicConfigEntries(1), [{ name: 'min.insync.replicas', value: '1' }]);
  assert.deepEqual(topicConfigEntries(2), [{ name: 'min.insync.replicas', value: '1' }]);
  assert.deepEqual(topicConfigEntries(3), [{ name: 'min.insync.replicas', value: '2' }]);
  assert.deepEqual(topicConfigEntries(5), [{ name: 'min.insync.replicas', value: '4' }]);
});

test('an existing topic as durable as the sink would make it: nothing to say', () => {
  assert.deepEqual(durabilityProblems({ replicationFactor: 3, minInsyncReplicas: 2 }, 3), []);
  assert.deepEqual(durabilityProblems({ replicationFactor: 3, minInsyncReplicas: 3 }, 3), []);
  assert.deepEqual(durabilityProblems({ replicationFactor: 1, minInsyncReplicas: 1 }, 1), []);
  // Unknown (the broker would not say): no guess.
  assert.deepEqual(durabilityProblems({ replicationFactor: 3, minInsyncReplicas: null }, 3), []);
});

test('an existing topic with a weaker min.insync.replicas or fewer replicas is reported', () => {
  const [weak] = durabilityProblems({ replicationFactor: 3, minInsyncReplicas: 1 }, 3);
  assert.match(weak ?? '', /min\.insync\.replicas is 1 for 3 replicas \(2 would/);
  const few = durabilityProblems({ replicationFactor: 1, minInsyncReplicas: 1 }, 3);
  assert.deepEqual(few, ['it has 1 replicas where 3 are configured']);
  assert.equal(durabilityProblems({ replicationFactor: 5, minInsyncReplicas: 2 }, 3).length, 1);
});
