import { StorageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { toSinkFailure } from './kafka-errors.js';
import type { KafkaTransport, SendAnswer, SinkProducer } from './kafka-transport.js';
import type { PublishTimer } from '../../metrics/publish-latency.js';

/** How long the next operation waits, at most, for an abandoned send to end (it cannot reach Kafka). */
const ABANDON_WAIT_MS = 10_000;

const noop = (): void => undefined;

export interface Message {
  key: Buffer;
  value: Buffer;
}

/** The messages of one send that go to one partition. */
export interface PartitionPart<M extends Message> {
  partition: number;
  messages: readonly M[];
}

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
   * One send: a request per partition, all at once, each tried again with the same producer after
   * retriable failures until the deadline (the broker then drops a batch it already has).
   * `onConfirmed` hears of each partition's part as Kafka confirms it, so a send that fails still
   * says what it stored: one request across partitions fails as a whole when one broker fails, and
   * sending it again would store the other brokers' parts twice, under new sequence numbers. At
   * the deadline the parts still in flight are abandoned with their producer, and the send fails
   * with a retriable SINK_TIMEOUT; other failures fail it once every part in flight has ended.
   */
  async send<M extends Message>(
    parts: readonly PartitionPart<M>[],
    onConfirmed: (part: PartitionPart<M>, answers: SendAnswer[]) => void,
  ): Promise<void> {
    const producer = await this.connect();
    const { timeoutMs } = this.options;
    const deadline = Date.now() + timeoutMs;
    let pending = parts;
    for (let backoffMs = 100; ; backoffMs = Math.min(backoffMs * 2, 2_000)) {
      const attempts = pending.map((part) => ({ part, attempt: this.timed(producer, part) }));
      const outcomes = await Promise.all(attempts.map(({ attempt }) => settleBy(attempt, deadline)));
      const failed: { part: PartitionPart<M>; error: unknown }[] = [];
      const late: typeof attempts = [];
      outcomes.forEach((outcome, i) => {
        const attempt = attempts[i] as (typeof attempts)[number];
        if (outcome.kind === 'ok') onConfirmed(attempt.part, outcome.value);
        else if (outcome.kind === 'late') late.push(attempt);
        else failed.push({ part: attempt.part, error: outcome.error });
      });
      if (late.length > 0) {
        const records = late.reduce((sum, { part }) => sum + part.messages.length, 0);
        this.abandon(producer, Promise.allSettled(late.map(({ attempt }) => attempt)), records);
        throw new StorageError(
          'SINK_TIMEOUT',
          `Kafka did not confirm a send of ${records} records within ${timeoutMs} ms`,
        );
      }
      if (failed.length === 0) return;
      const judged = failed.map(({ error }) => ({ raw: error, ...toSinkFailure(error, this.options.topic) }));
      // A failure that needs a new producer is the one the caller must see, then one not retriable.
      const worst = judged.find((f) => f.resetProducer) ?? judged.find((f) => !f.error.retriable);
      const waitMs = Math.min(backoffMs, deadline - Date.now());
      if (worst || waitMs <= 0) throw (worst ?? (judged[0] as (typeof judged)[number])).raw;
      this.options.logger.debug(
        { err: judged[0]?.raw, partitions: failed.map(({ part }) => part.partition), retryInMs: waitMs },
        'Kafka send failed; trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      pending = failed.map(({ part }) => part);
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

  /** One partition's request, timed for the publish-latency histogram. */
  private async timed(producer: SinkProducer, part: PartitionPart<Message>): Promise<SendAnswer[]> {
    const started = performance.now();
    const observe = (result: 'ok' | 'error'): void =>
      this.options.publishTimer?.observe((performance.now() - started) / 1000, result);
    try {
      const answers = await producer.send(part.partition, part.messages);
      observe('ok');
      return answers;
    } catch (err) {
      observe('error');
      throw err;
    }
  }

  /** Cuts the producer off, and has the next operation wait until the sends in flight ended. */
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
