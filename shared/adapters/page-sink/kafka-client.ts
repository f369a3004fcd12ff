import {
  Kafka,
  logLevel,
  type ISocketFactory,
  type LogEntry,
  type logCreator,
  type RetryOptions,
} from 'kafkajs';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from '../../logger.js';

export interface KafkaClientOptions {
  brokers: readonly string[];
  clientId?: string;
  connectionTimeoutMs?: number;
  /** A request without an answer for this long fails (retriable) instead of waiting on. */
  requestTimeoutMs?: number;
  /** How long kafkajs itself keeps trying (default KAFKA_RETRY). */
  retry?: RetryOptions;
  /** How connections to brokers are opened (default: plain TCP, as kafkajs does). */
  socketFactory?: ISocketFactory;
  /** TLS to the brokers (shared/config/tls.ts kafkaSsl); absent: plain TCP. */
  ssl?: ConnectionOptions | undefined;
  logger: Logger;
}

/**
 * Messages kafkajs logs at warn or error level on purpose, for a choice made here: the producer's
 * retries are limited (bounded write time; at-least-once needs no more than that).
 */
const EXPECTED = [/^Limiting retries for the idempotent producer/];

/**
 * kafkajs logs through pino, at warn and above. kafkajs errors are mostly attempts it retries
 * itself (a broker restarting logs one per attempt); what finally fails reaches the caller as a
 * typed error, so they are logged as warnings here.
 */
export function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _logger, ...extra } = log;
      const child = { ...extra, kafkaNamespace: namespace };
      if (EXPECTED.some((re) => re.test(message))) logger.debug(child, message);
      else if (level === logLevel.ERROR || level === logLevel.WARN) logger.warn(child, message);
      else if (level === logLevel.INFO) logger.info(child, message);
      else logger.debug(child, message);
    };
}

/**
 * How long kafkajs keeps trying before it gives up with an error: backoffs of about 0.3, 0.6, 1.2,
 * 2.4, 4.8 and 5 s (±20 %), about 14 s in all. Used for connecting (also the reconnect inside a
 * send, which is what waits through a broker outage) and for the producer's sends. kafkajs warns
 * that limited retries can break exactly-once; the sink promises at-least-once, which they keep.
 */
export const KAFKA_RETRY: RetryOptions = { initialRetryTime: 300, maxRetryTime: 5_000, retries: 6 };

/**
 * The page sink's producers retry little inside kafkajs (one more try, about 0.1 s later, for
 * connecting and for each send): the sink retries each send itself until the send's deadline,
 * with the same producer (so the broker still drops a batch it already has), and an abandoned
 * producer, whose connections are cut, must give up within moments rather than back off for 14 s.
 */
export const PRODUCER_RETRY: RetryOptions = { initialRetryTime: 100, maxRetryTime: 500, retries: 1 };

/** The kafkajs client, logging through pino. */
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: options.clientId ?? 'ackcrawl',
    brokers: [...options.brokers],
    connectionTimeout: options.connectionTimeoutMs ?? 3_000,
    requestTimeout: options.requestTimeoutMs ?? 10_000,
    enforceRequestTimeout: true,
    retry: options.retry ?? KAFKA_RETRY,
    ...(options.socketFactory ? { socketFactory: options.socketFactory } : {}),
    ...(options.ssl ? { ssl: options.ssl } : {}),
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(options.logger.child({ module: 'kafkajs' })),
  });
}
