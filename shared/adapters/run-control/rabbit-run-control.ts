import { connect as amqpConnect, type ConsumeMessage } from 'amqplib';
import { AppError, StorageError, errorMessage } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  runCommandSchema,
  type RunCommandHandler,
  type RunControl,
  type RunControlSubscription,
} from '../../ports/run-control.js';
import { BrokerLink, type Connect, type Link } from '../frontier/rabbitmq/broker-link.js';
import type { BrokerUrls } from '../frontier/rabbitmq/broker-urls.js';

export interface RabbitRunControlOptions {
  /** amqp://user:pass@host:port/vhost (amqps:// for TLS), or the URLs of a cluster's nodes (tried in turn). */
  url: BrokerUrls;
  /** The fanout exchange; `ackcrawl.run-control` unless given (tests use their own). */
  exchange?: string;
  logger: Logger;
  /**
   * A publish not confirmed by then fails RUN_CONTROL_UNAVAILABLE and drops the link; 10 s unless
   * given. One the broker blocks (a resource alarm) fails at once and keeps the link.
   */
  confirmTimeoutMs?: number;
  /** Opens the AMQP connection (tests inject one to cut it). */
  connect?: Connect;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export const DEFAULT_RUN_CONTROL_EXCHANGE = 'ackcrawl.run-control';

const defaultConnect: Connect = (url) =>
  amqpConnect(url, {
    timeout: 10_000,
    noDelay: true,
    clientProperties: { connection_name: 'ackcrawl run-control' },
  });

function unavailable(op: string, cause?: unknown): StorageError {
  const why = cause === undefined ? 'not connected to RabbitMQ' : errorMessage(cause);
  return new StorageError('RUN_CONTROL_UNAVAILABLE', `run control ${op} failed: ${why}`, { cause });
}

function blockedPublish(): StorageError {
  return unavailable('publish', 'RabbitMQ blocks publishing (a disk or memory alarm on the broker)');
}

interface Subscriber {
  handler: RunCommandHandler;
  /** The consumer on the current link, if any. */
  consumer: { link: Link; tag: string } | null;
}

/**
 * Run control over a durable RabbitMQ fanout exchange: every subscriber (a scheduler) has its own
 * exclusive, server-named queue bound to it, so each command reaches every scheduler that is
 * connected. Publishes wait for the broker's confirm. After a lost connection the link reconnects
 * with backoff and every subscription gets a fresh queue; commands sent in between are missed,
 * which costs nothing: schedulers read desired state from SQL (see shared/ports/run-control.ts).
 */
export async function openRabbitRunControl(options: RabbitRunControlOptions): Promise<RunControl> {
  const exchange = options.exchange ?? DEFAULT_RUN_CONTROL_EXCHANGE;
  const logger = options.logger.child({ module: 'run-control', exchange });
  const confirmTimeoutMs = options.confirmTimeoutMs ?? 10_000;
  const subscribers = new Set<Subscriber>();
  let closed = false;

  const consume = async (link: Link, subscriber: Subscriber): Promise<void> => {
    const { channel } = link;
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
    await channel.bindQueue(queue, exchange, '');
    const { consumerTag } = await channel.consume(queue, (message) => receive(subscriber, message), {
      noAck: true,
    });
    subscriber.consumer = { link, tag: consumerTag };
  };

  const receive = (subscriber: Subscriber, message: ConsumeMessage | null): void => {
    if (message === null || !subscribers.has(subscriber)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message.content.toString('utf8'));
    } catch {
      logger.warn('run command is not JSON; dropped');
      return;
    }
    const command = runCommandSchema.safeParse(parsed);
    if (!command.success) {
      logger.warn({ problem: command.error.issues[0]?.message }, 'run command of an unknown form; dropped');
      return;
    }
    Promise.resolve()
      .then(() => subscriber.handler(command.data))
      .catch((err: unknown) =>
        logger.error(
          { err, command: command.data.type, runId: command.data.runId },
          'run command handler failed',
        ),
      );
  };

  const link = new BrokerLink({
    url: options.url,
    connect: options.connect ?? defaultConnect,
    logger,
    initialBackoffMs: options.initialBackoffMs,
    maxBackoffMs: options.maxBackoffMs,
    setup: async (next) => {
      await next.channel.assertExchange(exchange, 'fanout', { durable: true });
      for (const subscriber of subscribers) await consume(next, subscriber);
    },
    onDown: (gone) => {
      for (const subscriber of subscribers) {
        if (subscriber.consumer?.link === gone) subscriber.consumer = null;
      }
    },
  });
  try {
    await link.start();
  } catch (err) {
    throw err instanceof AppError && err.code !== 'FRONTIER_UNAVAILABLE' ? err : unavailable('connect', err);
  }

  const current = (op: string): Link => {
    if (closed) throw new StorageError('RUN_CONTROL_CLOSED', 'run control is closed');
    const now = link.current;
    if (now === null) throw unavailable(op);
    return now;
  };

  return {
    async publish(command) {
      const now = current('publish');
      // SQL holds the change already and schedulers follow it: a command is only a wake-up, so
      // the API does not wait out a resource alarm for it (nor drop a link that is alive).
      if (now.flow.blocked) throw blockedPublish();
      const body = Buffer.from(JSON.stringify(command));
      return new Promise<void>((resolve, reject) => {
        const settle = (err?: StorageError): void => {
          clearTimeout(timer);
          now.model.off('blocked', onBlocked);
          if (err) reject(err);
          else resolve();
        };
        // Blocked while waiting for the confirm: the broker holds the command until the alarm
        // clears (a late wake-up costs nothing); the caller is told now, not at the timeout.
        const onBlocked = (): void => settle(blockedPublish());
        const timer = setTimeout(() => {
          link.reset('a run command was not confirmed in time');
          settle(unavailable('publish', `not confirmed within ${confirmTimeoutMs} ms`));
        }, confirmTimeoutMs);
        now.model.on('blocked', onBlocked);
        try {
          now.channel.publish(
            exchange,
            '',
            body,
            { contentType: 'application/json', persistent: false },
            (err) => settle(err ? unavailable('publish', err) : undefined),
          );
        } catch (err) {
          settle(unavailable('publish', err));
        }
      });
    },
    async subscribe(handler): Promise<RunControlSubscription> {
      const now = current('subscribe');
      const subscriber: Subscriber = { handler, consumer: null };
      subscribers.add(subscriber);
      try {
        await consume(now, subscriber);
      } catch (err) {
        subscribers.delete(subscriber);
        throw unavailable('subscribe', err);
      }
      return {
        async close() {
          if (!subscribers.delete(subscriber)) return;
          const consumer = subscriber.consumer;
          subscriber.consumer = null;
          // Cancelling deletes the auto-delete queue; a dead link took it already.
          if (consumer?.link.alive) await consumer.link.channel.cancel(consumer.tag).catch(() => undefined);
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      subscribers.clear();
      await link.close();
    },
  };
}
