import type { Channel, ChannelModel } from 'amqplib';
import { queueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import type { Logger } from '../../shared/logger.js';

/**
 * The dead-letter queue's depth, by a passive `checkQueue` (it never declares: a missing queue is
 * an error, not a new queue), over a connection of its own. The connection is made on the first
 * read and made again on the read after it was lost (a RabbitMQ restart, or no RabbitMQ when the
 * master started): until then a read fails, and the dlq.growing rule says it cannot tell. A
 * channel that a 404 closed is opened again on the next read.
 */
export function deadLetterDepthReader(options: {
  connect: () => Promise<ChannelModel>;
  queuePrefix: string;
  logger: Logger;
}): { read(): Promise<{ queue: string; depth: number }>; close(): Promise<void> } {
  const queue = queueNames(options.queuePrefix).failed;
  let connection: Promise<ChannelModel> | null = null;
  let channel: Promise<Channel> | null = null;
  let closed = false;
  const connectOnce = (): Promise<ChannelModel> => {
    connection ??= options.connect().then(
      (c) => {
        c.on('error', (err: unknown) => options.logger.warn({ err }, 'alerts: RabbitMQ connection error'));
        c.on('close', () => {
          connection = null;
          channel = null;
        });
        if (closed) void c.close().catch(() => undefined);
        return c;
      },
      (err: unknown) => {
        connection = null;
        throw err;
      },
    );
    return connection;
  };
  const open = (): Promise<Channel> => {
    channel ??= connectOnce()
      .then((c) => c.createChannel())
      .then((ch) => {
        ch.on('error', (err: unknown) =>
          options.logger.debug({ err, queue }, 'dead-letter check channel closed'),
        );
        ch.on('close', () => {
          channel = null;
        });
        return ch;
      });
    return channel;
  };
  return {
    async read() {
      if (closed) throw new Error('the dead-letter reader is closed');
      try {
        const ok = await (await open()).checkQueue(queue);
        return { queue, depth: ok.messageCount };
      } catch (err) {
        channel = null;
        throw err;
      }
    },
    async close() {
      closed = true;
      const c = await connection?.catch(() => null);
      await c?.close().catch(() => undefined);
    },
  };
}
