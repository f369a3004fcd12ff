import type { Duplex } from 'node:stream';
import { connect, type Channel, type ChannelModel } from 'amqplib';

/** The broker scripts/services.sh runs; CI starts it, so tests fail (never skip) without it. */
export const AMQP_URL = process.env.ACKCRAWL_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export interface RabbitAdmin {
  channel: Channel;
  /** Deletes the queues and exchanges (missing ones are fine), then closes the connection. */
  deleteQueuesAndClose: (queues: readonly string[], exchanges?: readonly string[]) => Promise<void>;
}

/** A plain connection for a test's own checks and clean-up; rejects with how to start RabbitMQ. */
export async function rabbitAdmin(): Promise<RabbitAdmin> {
  let model: ChannelModel;
  try {
    model = await connect(AMQP_URL, { timeout: 5_000 });
  } catch (err) {
    throw new Error(
      `RabbitMQ is not reachable at ${AMQP_URL} (${err instanceof Error ? err.message : String(err)}); ` +
        'run: bash scripts/services.sh up',
      { cause: err },
    );
  }
  model.on('error', () => undefined);
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  return {
    channel,
    deleteQueuesAndClose: async (queues, exchanges = []) => {
      for (const queue of queues) await channel.deleteQueue(queue);
      for (const exchange of exchanges) await channel.deleteExchange(exchange);
      await model.close();
    },
  };
}

/**
 * Cuts a connection the way kill -9 would: the socket goes, with no AMQP close handshake, so the
 * broker sees a dead peer and puts its unacked deliveries back.
 */
export function cutConnection(model: ChannelModel): void {
  const stream = (model.connection as unknown as { stream?: Duplex }).stream;
  // With an error: amqplib notices a dead socket by 'error' or 'end', not by 'close'.
  stream?.destroy(new Error('connection cut by the test'));
}
