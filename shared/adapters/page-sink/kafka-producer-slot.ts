import { StorageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { toSinkFailure } from './kafka-errors.js';
import type { KafkaTransport, SendAnswer, SinkProducer } from './kafka-transport.js';
import type { PublishTimer } from '../../metrics/publish-latency.js';

/** How long the next operation waits, at most, for an abandoned send to end (it cannot reach Kafka). */
const ABANDON_WAIT_MS = 10_000;

const noop = (): void => undefined;

export interface ProducerSlotOptions {
  transport: KafkaTransport;
  /** Runs before the first producer connects (creating the topic, say). */
  prepare: () => Promise<void>;
  /** Deadline of each send, and of connecting. */
  timeoutMs: number;
  topic: string;
  logger: Logger;
  /** Told how long each producer send took until Kafka acked it (or failed); absent: not timed. */
  publishTimer?: PublishTimer;
}

/**
 * The Kafka sink's one producer at a time, and the deadlines of what it does: connecting, and each
 * send, tried again on the same producer after retriable failures until its deadline. A send still
 * unconfirmed at its deadline is abandoned with its producer (connections cut, see kafka-sockets.ts);
 * `abandonedEnded()` resolves once such a send has ended and the producer is disconnected, and the
 * next producer is a new one. The caller runs one send at a time and waits for `abandonedEnded()`
 * before the next operation.
 */
export class ProducerSlot {
  private producer: SinkProducer | null = null;
  private starting: Promise<SinkProducer> | null = null;
  private abandoned: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: ProducerSlotOptions) {}

  /** The producer, connected (and `prepare` done), within the deadline. */
  connect(): Promise<SinkProducer> {
    return this.withDeadline(this.connected(), 'connect to Kafka');
  }

  /** Starts connecting if nothing is connected yet, without a deadline (for `start()`). */
  connected(): Promise<SinkProducer> {
    this.starting ??= this.open().catch((err: unknown) => {
      this.starting = null;
      throw err;
    });
    return this.starting;
  }

  /**
   * One send, tried again with the same producer after retriable failures until its deadline (the
   * broker then drops a batch it already has). At the deadline an attempt still in flight is
   * abandoned with its producer, and the send fails with a retriable SINK_TIMEOUT.
   */
  async send(messages: readonly { key: Buffer; value: Buffer }[]): Promise<SendAnswer[]> {
    const producer = await this.connect();
    const { timeoutMs } = this.options;
    const deadline = Date.now() + timeoutMs;
    for (let backoffMs = 100; ; backoffMs = Math.min(backoffMs * 2, 2_000)) {
      const started = performance.now();
      const attempt = producer.send(messages);
      const outcome = await settleBy(attempt, deadline);
      this.options.publishTimer?.observe(
        (performance.now() - started) / 1000,
        outcome.kind === 'ok' ? 'ok' : 'error',
      );
      if (outcome.kind === 'ok') return outcome.value;
      if (outcome.kind === 'late') {
        this.abandon(producer, attempt, messages.length);
        throw new StorageError(
          'SINK_TIMEOUT',
          `Kafka did not confirm a send of ${messages.length} records within ${timeoutMs} ms`,
        );
      }
      const failure = toSinkFailure(outcome.error, this.options.topic);
      const waitMs = Math.min(backoffMs, deadline - Date.now());
      if (!failure.error.retriable || failure.resetProducer || waitMs <= 0) throw outcome.error;
      this.options.logger.debug({ err: outcome.error, retryInMs: waitMs }, 'Kafka send failed; trying again');
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  /** Resolves once every abandoned send has ended and its producer is disconnected. */
  async abandonedEnded(): Promise<void> {
    const abandoned = this.abandoned;
    if (!abandoned) return;
    await abandoned;
    if (this.abandoned === abandoned) this.abandoned = null;
  }

  /** Disconnects the producer; the next send starts a new one. */
  async drop(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    this.starting = null;
    if (producer) await producer.disconnect().catch(noop);
  }

  /** Drops the producer; one still connecting is disconnected once it has. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  private async open(): Promise<SinkProducer> {
    await this.options.prepare();
    const producer = this.options.transport.producer();
    try {
      await producer.connect();
      // close() finished meanwhile (it does not wait for a start outside a write): undo.
      if (this.closed) throw closedError();
    } catch (err) {
      await producer.disconnect().catch(noop);
      throw err;
    }
    this.producer = producer;
    this.options.logger.info('connected to Kafka');
    return producer;
  }

  /** Cuts the producer off, and has the next operation wait until the send in flight ended. */
  private abandon(producer: SinkProducer, attempt: Promise<unknown>, records: number): void {
    const { logger, timeoutMs } = this.options;
    logger.warn({ records, timeoutMs }, 'Kafka did not confirm a send in time; abandoning its producer');
    if (this.producer === producer) {
      this.producer = null;
      this.starting = null;
    }
    producer.abandon();
    const ended = attempt.then(noop, noop);
    const previous = this.abandoned ?? Promise.resolve();
    this.abandoned = (async () => {
      await previous;
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        ended.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ABANDON_WAIT_MS))),
      ]);
      clearTimeout(timer);
      if (!waited) {
        logger.error(
          { waitedMs: ABANDON_WAIT_MS },
          'an abandoned Kafka send has not ended; its connections are closed, so it cannot write: going on',
        );
      }
      await producer.disconnect().catch(noop);
    })();
  }

  /** A start still retrying when the deadline passes goes on in the background. */
  private async withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
    const { timeoutMs } = this.options;
    const outcome = await settleBy(promise, Date.now() + timeoutMs);
    if (outcome.kind === 'ok') return outcome.value;
    if (outcome.kind === 'failed') throw outcome.error;
    promise.catch(noop);
    throw new StorageError('SINK_TIMEOUT', `could not ${what} within ${timeoutMs} ms`);
  }
}

type Settled<T> = { kind: 'ok'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'late' };

/** How `promise` settled, or `late` if it had not by `deadline` (ms since the epoch). */
async function settleBy<T>(promise: Promise<T>, deadline: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'late' }), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([
      promise.then(
        (value): Settled<T> => ({ kind: 'ok', value }),
        (error: unknown): Settled<T> => ({ kind: 'failed', error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function closedError(): StorageError {
  return new StorageError('SINK_CLOSED', 'the page sink is closed');
}
