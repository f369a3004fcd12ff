import type { Duplex } from 'node:stream';
import { connect, type Channel, type ChannelModel } from 'amqplib';
import { UrlRotation } from '../../shared/adapters/frontier/rabbitmq/broker-urls.js';

/**
 * The broker scripts/services.sh runs (CI starts it, so tests fail, never skip, without it), or
 * the nodes of a cluster that ACKCRAWL_AMQP_URL lists (spaces or commas); AMQP_URL is the first.
 */
export const AMQP_URLS: readonly string[] = (
  process.env.ACKCRAWL_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
)
  .split(/[\s,]+/)
  .filter(Boolean);
export const AMQP_URL = AMQP_URLS[0] as string;

export interface RabbitAdmin {
  channel: Channel;
  /** Deletes the queues and exchanges (missing ones are fine), then closes the connection. */
  deleteQueuesAndClose: (queues: readonly string[], exchanges?: readonly string[]) => Promise<void>;
}

/**
 * A plain connection for a test's own checks and clean-up, to the first of `urls` that answers (a
 * cluster's nodes); rejects with how to start RabbitMQ.
 */
export async function rabbitAdmin(urls: readonly string[] = AMQP_URLS): Promise<RabbitAdmin> {
  let model: ChannelModel;
  try {
    model = await new UrlRotation(urls).connectAny((url) => connect(url, { timeout: 5_000 }));
  } catch (err) {
    throw new Error(
      `RabbitMQ is not reachable at ${urls.join(' ')} (${err instanceof Error ? err.message : String(err)}); ` +
        `run: bash scripts/services.sh ${urls.length > 1 ? 'cluster-up rabbitmq' : 'up'}`,
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

export interface QueueCounts {
  messageCount: number;
  consumerCount: number;
}

/**
 * Each queue's ready messages and consumers, or null for one that does not exist: one connection,
 * a throwaway channel per queue (a passive declare of a missing queue closes its channel).
 */
export async function checkQueues(
  queues: readonly string[],
  urls: readonly string[] = AMQP_URLS,
): Promise<Map<string, QueueCounts | null>> {
  const model = await new UrlRotation(urls).connectAny((url) => connect(url, { timeout: 5_000 }));
  model.on('error', () => undefined);
  const found = new Map<string, QueueCounts | null>();
  try {
    for (const queue of queues) {
      const channel = await model.createChannel();
      channel.on('error', () => undefined);
      try {
        const { messageCount, consumerCount } = await channel.checkQueue(queue);
        found.set(queue, { messageCount, consumerCount });
        await channel.close();
      } catch (err) {
        if ((err as { code?: unknown }).code !== 404) throw err;
        found.set(queue, null);
      }
    }
  } finally {
    await model.close();
  }
  return found;
}

/** Which of `queues` exist. */
export async function existingQueues(queues: readonly string[]): Promise<string[]> {
  return [...(await checkQueues(queues))].filter(([, counts]) => counts !== null).map(([queue]) => queue);
}
