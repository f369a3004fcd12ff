import type { Channel, ChannelModel } from 'amqplib';
import { queueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';
import type { Logger } from '../../shared/logger.js';

/**
 * The dead-letter queue's depth, by a passive `checkQueue` (it never declares: a missing queue is
 * an error, not a new queue). A channel that a 404 closed is opened again on the next read; the
 * connection is the caller's to open and the reader's to close.
 */
export function deadLetterDepthReader(options: {
  connection: ChannelModel;
  queuePrefix: string;
  logger: Logger;
}): { read(): Promise<{ queue: string; depth: number }>; close(): Promise<void> } {
  const queue = queueNames(options.queuePrefix).failed;
  let channel: Promise<Channel> | null = null;
  const open = (): Promise<Channel> => {
    channel ??= options.connection.createChannel().then((ch) => {
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
      try {
        const ok = await (await open()).checkQueue(queue);
        return { queue, depth: ok.messageCount };
      } catch (err) {
        channel = null;
        throw err;
      }
    },
    async close() {
      await options.connection.close().catch(() => undefined);
    },
  };
}
