import type { ServiceErrorCode } from '../../error-codes/index.js';
import { AppError, StorageError } from '../../errors.js';

/** The broker cannot be reached or did not answer in time: wait and try again. */
const UNAVAILABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
]);
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);
const AUTH = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
  'ILLEGAL_SASL_STATE',
  'UNSUPPORTED_SASL_MECHANISM',
]);
/** The broker lost track of this producer's sequence numbers: only a new producer id helps. */
const PRODUCER_STATE = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
]);

interface KafkaLikeError {
  name?: unknown;
  type?: unknown;
  retriable?: unknown;
  message?: unknown;
  cause?: unknown;
  originalError?: unknown;
}

export interface SinkFailure {
  error: AppError;
  /** Drop the producer and start a new one before the next write. */
  resetProducer: boolean;
}

/**
 * A kafkajs error as a typed StorageError. kafkajs wraps the error that ended its retries
 * (`KafkaJSNumberOfRetriesExceeded`, `KafkaJSNonRetriableError`) around the real one, so the whole
 * chain is looked at: the innermost protocol error type decides when there is one.
 */
export function toSinkFailure(err: unknown, topic: string): SinkFailure {
  if (err instanceof AppError) return { error: err, resetProducer: false };
  const chain = causeChain(err);
  const names = chain.map((e) => String(e.name ?? ''));
  const type = chain.map((e) => (typeof e.type === 'string' ? e.type : '')).find(Boolean) ?? '';
  const message = chain.map((e) => String(e.message ?? '')).find(Boolean) ?? String(err);
  const fail = (code: ServiceErrorCode, text: string, resetProducer = false): SinkFailure => ({
    error: new StorageError(code, `${text} (topic ${topic}): ${message}`, { cause: err }),
    resetProducer,
  });
  if (TOO_LARGE.has(type)) return fail('SINK_RECORD_TOO_LARGE', 'Kafka refused a batch as too large');
  if (AUTH.has(type)) return fail('SINK_AUTH', 'Kafka refused this client');
  if (PRODUCER_STATE.has(type)) return fail('SINK_PRODUCER_STATE', 'Kafka rejected the producer state', true);
  if (names.some((n) => UNAVAILABLE.has(n))) return fail('SINK_UNAVAILABLE', 'Kafka is unavailable');
  const retriable = chain.some((e) => e.retriable === true) || !chain.some((e) => e.retriable === false);
  return retriable
    ? fail('SINK_KAFKA', 'Kafka write failed')
    : fail('SINK_KAFKA_REJECTED', 'Kafka refused the write');
}

/** Errors of a topic just created on several brokers that not all of them know yet. */
const TOPIC_NOT_READY = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
]);

/** Whether a kafkajs error says the topic's partitions are not served yet (wait, then ask again). */
export function isTopicNotReady(err: unknown): boolean {
  return causeChain(err).some((e) => typeof e.type === 'string' && TOPIC_NOT_READY.has(e.type));
}

function causeChain(err: unknown): KafkaLikeError[] {
  const chain: KafkaLikeError[] = [];
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && chain.length < 8) {
    const e = current as KafkaLikeError;
    chain.push(e);
    current = e.originalError ?? e.cause;
  }
  return chain;
}
