import type { Message } from 'amqplib';
import { StorageError } from '../../../errors.js';
import type { Link, PublishFlow } from './broker-link.js';
import { unavailable } from './rabbit-errors.js';
import type { PublishTimer } from '../../../metrics/publish-latency.js';

export interface Outgoing {
  /** '' (the default exchange: `routingKey` is a queue name) or one of the frontier's exchanges. */
  exchange: string;
  routingKey: string;
  body: Buffer;
  headers?: Record<string, string | number>;
}

export interface PublisherOptions {
  /** Makes message ids unique across processes and restarts. */
  token: string;
  /** A batch not confirmed by then drops the link: its fate is unknown, so its leases must go stale. */
  confirmTimeoutMs: number;
  /** Drops the link (see BrokerLink.reset). */
  resetLink: (reason: string) => void;
  /** Told how long each batch took until its last confirm (or failed); absent: not timed. */
  publishTimer?: PublishTimer;
}

/**
 * Publishes through the link's confirm channel and resolves only once the broker confirmed every
 * message of the batch: persistent, `mandatory` so a message that no queue takes (a deleted queue)
 * comes back as an error instead of vanishing with a confirm. (The ready exchange never returns
 * one: its alternate exchange takes what no run queue does, see topology.ts.)
 * Messages are pipelined, so a batch costs about one round trip plus the broker's fsync.
 */
export class Publisher {
  private seq = 0;
  private readonly returned = new WeakMap<Link, Set<string>>();

  constructor(private readonly options: PublisherOptions) {}

  /** Call once per new link, before publishing on it. */
  attach(link: Link): void {
    const returned = new Set<string>();
    this.returned.set(link, returned);
    link.channel.on('return', (message: Message) => {
      const id: unknown = message.properties.messageId;
      if (typeof id === 'string') returned.add(id);
    });
  }

  /**
   * Resolves once every item is confirmed. `onConfirmed(i)` runs as item i is confirmed, so a
   * caller whose batch failed half way still knows which messages the broker has.
   */
  async publish(
    link: Link,
    items: readonly Outgoing[],
    op: string,
    onConfirmed?: (index: number) => void,
  ): Promise<void> {
    if (items.length === 0) return;
    const returned = this.returned.get(link);
    if (!link.alive || returned === undefined) throw unavailable(op);
    const timer = this.options.publishTimer;
    if (!timer) return this.publishBatch(link, items, op, returned, onConfirmed);
    const started = performance.now();
    try {
      await this.publishBatch(link, items, op, returned, onConfirmed);
      timer.observe((performance.now() - started) / 1000, 'ok');
    } catch (err) {
      timer.observe((performance.now() - started) / 1000, 'error');
      throw err;
    }
  }

  private async publishBatch(
    link: Link,
    items: readonly Outgoing[],
    op: string,
    returned: Set<string>,
    onConfirmed?: (index: number) => void,
  ): Promise<void> {
    const confirms: Promise<void>[] = [];
    for (const [index, item] of items.entries()) {
      const messageId = `${this.options.token}.${(this.seq += 1).toString(36)}`;
      let flowing = true;
      const confirm = new Promise<void>((resolve, reject) => {
        try {
          flowing = link.channel.publish(
            item.exchange,
            item.routingKey,
            item.body,
            {
              persistent: true,
              mandatory: true,
              contentType: 'application/json',
              messageId,
              timestamp: Math.floor(Date.now() / 1000),
              ...(item.headers === undefined ? {} : { headers: item.headers }),
            },
            (err: unknown) => {
              if (err) reject(unavailable(op, err));
              else if (returned.delete(messageId)) {
                const target = `${item.exchange || '(default)'} ${item.routingKey}`;
                this.options.resetLink(`no queue took a message to ${target}`);
                reject(
                  new StorageError('FRONTIER_UNROUTABLE', `rabbitmq frontier ${op}: no queue for ${target}`, {
                    details: { exchange: item.exchange, routingKey: item.routingKey },
                  }),
                );
              } else {
                onConfirmed?.(index);
                resolve();
              }
            },
          );
        } catch (err) {
          // The channel closed under us: amqplib throws IllegalOperationError synchronously.
          reject(unavailable(op, err));
        }
      });
      // Handled now, awaited below: a rejection while waiting for 'drain' must not count as unhandled.
      confirm.catch(() => undefined);
      confirms.push(confirm);
      if (!flowing) await drained(link);
      if (!link.alive) break;
    }
    await this.confirmed(link, confirms, op);
  }

  private async confirmed(link: Link, confirms: Promise<void>[], op: string): Promise<void> {
    const limitMs = this.options.confirmTimeoutMs;
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const check = (): void => {
        const waitMs = confirmWaitLeft(link.flow, startedAt, limitMs, performance.now());
        if (waitMs > 0) {
          timer = setTimeout(check, waitMs);
          return;
        }
        this.options.resetLink(`no publisher confirm within ${limitMs} ms`);
        reject(unavailable(op, 'the broker did not confirm in time'));
      };
      timer = setTimeout(check, limitMs);
    });
    try {
      await Promise.race([Promise.all(confirms), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * How much longer to wait for a batch's confirms before giving the link up: the timeout counts
 * only time the broker did not block the connection. While it blocks (a resource alarm: a disk or
 * memory limit), the broker is alive and holds the publish until the alarm clears, however long
 * that takes; dropping the link then would only hand every delivery of this scheduler back to be
 * fetched again, and the next connection would be blocked the same. A broker that dies while
 * blocking closes the socket or misses heartbeats, which drops the link without this timeout.
 */
export function confirmWaitLeft(flow: PublishFlow, startedAt: number, limitMs: number, now: number): number {
  if (flow.blocked) return limitMs;
  return Math.max(0, Math.max(startedAt, flow.unblockedAt) + limitMs - now);
}

/** Waits for the socket buffer to drain (publish returned false), or for the channel to close. */
function drained(link: Link): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      link.channel.off('drain', done);
      link.channel.off('close', done);
      resolve();
    };
    link.channel.on('drain', done);
    link.channel.on('close', done);
  });
}
