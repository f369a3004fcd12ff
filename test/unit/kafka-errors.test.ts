import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toSinkFailure } from '../../shared/adapters/page-sink/kafka-errors.js';
import { StorageError } from '../../shared/errors.js';

/** Shaped like kafkajs errors (kafkajs does not export its classes to ESM by name). */
function kafkaError(name: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), { name, retriable: true }, fields);
}

test('connection errors wrapped by the retrier are retriable SINK_UNAVAILABLE', () => {
  const inner = kafkaError('KafkaJSConnectionError', { code: 'ECONNREFUSED' });
  const outer = kafkaError('KafkaJSNumberOfRetriesExceeded', { retriable: false, cause: inner });
  const { error, resetProducer } = toSinkFailure(outer, 't');
  assert.ok(error instanceof StorageError);
  assert.equal(error.code, 'SINK_UNAVAILABLE');
  assert.equal(error.retriable, true);
  assert.equal(resetProducer, false);
  assert.match(error.message, /topic t/);
});

test('a batch too large is not retriable', () => {
  const inner = kafkaError('KafkaJSProtocolError', { type: 'MESSAGE_TOO_LARGE', retriable: false });
  const outer = kafkaError('KafkaJSNonRetriableError', { retriable: false, cause: inner });
  const { error } = toSinkFailure(outer, 't');
  assert.equal(error.code, 'SINK_RECORD_TOO_LARGE');
  assert.equal(error.retriable, false);
});

test('lost producer state asks for a new producer and is retriable', () => {
  const inner = kafkaError('KafkaJSProtocolError', {
    type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    retriable: false,
  });
  const failure = toSinkFailure(
    kafkaError('KafkaJSNonRetriableError', { retriable: false, cause: inner }),
    't',
  );
  assert.equal(failure.error.code, 'SINK_PRODUCER_STATE');
  assert.equal(failure.error.retriable, true);
  assert.equal(failure.resetProducer, true);
});

test('authorization failures are not retriable', () => {
  const inner = kafkaError('KafkaJSProtocolError', { type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false });
  assert.equal(toSinkFailure(inner, 't').error.code, 'SINK_AUTH');
});

test('typed errors pass through unchanged', () => {
  const own = new StorageError('BLOB_STORE_UNAVAILABLE', 'down');
  assert.equal(toSinkFailure(own, 't').error, own);
});

test('other errors keep the retriable flag kafkajs gave them', () => {
  assert.equal(toSinkFailure(kafkaError('KafkaJSError'), 't').error.retriable, true);
  assert.equal(toSinkFailure(kafkaError('KafkaJSError', { retriable: false }), 't').error.retriable, false);
  assert.equal(toSinkFailure(new Error('plain'), 't').error.code, 'SINK_KAFKA');
});
