import { connect as amqpConnect, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import { coalesceWrites } from './write-coalescing.js';
import type { Logger } from '../../../logger.js';
import { unavailable } from './rabbit-errors.js';
import { describeUrl, UrlRotation, type BrokerUrls } from './broker-urls.js';

/**
 * One connection and its one confirm channel, numbered by generation. Deliveries, leases and
 * pending confirms belong to the generation they came from: once it is gone (alive false) none of
 * them may be acked or nacked, as amqplib would throw on the closed channel, or a new channel would
 * see an unknown delivery tag and close with PRECONDITION_FAILED.
 */
export interface Link {
  readonly generation: number;
  readonly channel: ConfirmChannel;
  /** The connection, for a throwaway channel (a passive check that may fail closes its channel). */
  readonly model: ChannelModel;
  alive: boolean;
  /** The broker's flow control on this connection (a resource alarm), as it told us. */
  readonly flow: PublishFlow;
}

/**
 * Whether the broker blocks this connection's publishing (a disk or memory alarm), and since when it
 * no longer does. A blocked broker is alive and says why it is silent: its confirms are late, not
 * lost, so a confirm timeout must not count that time (see Publisher).
 */
export interface PublishFlow {
  blocked: boolean;
  /** performance.now() when the last block ended; 0 if it never was blocked. */
  unblockedAt: number;
}

export type Connect = (url: string) => Promise<ChannelModel>;

export interface BrokerLinkOptions {
  /**
   * The broker, or the nodes of one cluster: a failed connect tries the next URL (each once per
   * attempt), and after a lost link the reconnect starts at the next one (round robin).
   */
  url: BrokerUrls;
  /** Opens a connection; amqplib's connect with a 10 s timeout unless given (tests inject one). */
  connect?: Connect;
  logger: Logger;
  /** Declares the queues and starts consuming on a new link. Runs on every (re)connect. */
  setup: (link: Link) => Promise<void>;
  /** The link is gone: everything it delivered is stale. Runs once per generation. */
  onDown: (link: Link) => void;
  /** Reconnect backoff: doubles from 100 ms up to 10 s unless given, with ±20% jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * noDelay matters: without it Nagle holds a publish back behind the previous small write (an ack)
 * until the broker's delayed TCP ack, about 40 ms per settle.
 */
export const defaultConnect: Connect = (url) =>
  amqpConnect(url, {
    timeout: 10_000,
    noDelay: true,
    clientProperties: { connection_name: 'ackcrawl frontier' },
  });

/**
 * Keeps a link to the broker: connects, runs setup, and after a lost connection or channel (broker
 * restart, network, a channel error) reconnects with exponential backoff until closed, to the next
 * URL of the list first (a cluster's node that died is tried again only after the others). Between
 * links, `current` is null and operations fail fast with FRONTIER_UNAVAILABLE.
 */
export class BrokerLink {
  private link: Link | null = null;
  private model: ChannelModel | null = null;
  private generation = 0;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly connect: Connect;
  private readonly urls: UrlRotation;

  constructor(private readonly options: BrokerLinkOptions) {
    this.connect = options.connect ?? defaultConnect;
    this.urls = new UrlRotation(options.url);
  }

  /** The URL connected to, or tried next (host and port only, for logs). */
  get broker(): string {
    return describeUrl(this.urls.current);
  }

  /** The current connection's publishing is blocked by the broker (a resource alarm). */
  get publishBlocked(): boolean {
    return this.current?.flow.blocked ?? false;
  }

  get current(): Link | null {
    return this.link !== null && this.link.alive ? this.link : null;
  }

  require(op: string): Link {
    const link = this.current;
    if (link === null) throw unavailable(op);
    return link;
  }

  /** The first connection; rejects (FRONTIER_UNAVAILABLE, or setup's error) instead of retrying. */
  async start(): Promise<void> {
    await this.open();
  }

  /** Drops the current link (a confirm that never came, say) and reconnects with backoff. */
  reset(reason: string): void {
    const link = this.current;
    if (link === null) return;
    this.options.logger.warn({ generation: link.generation, reason }, 'dropping the broker link');
    this.down(link, this.model);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const model = this.model;
    this.model = null;
    const link = this.link;
    this.link = null;
    if (link !== null) {
      link.alive = false;
      this.options.onDown(link);
    }
    // Closing the connection hands every unacked delivery back to the broker. A peer that stopped
    // answering gets 5 s; then the socket is left to the heartbeat.
    if (model !== null) await closeWithin(model, 5_000);
  }

  private async open(): Promise<void> {
    let model: ChannelModel;
    const log = this.options.logger;
    try {
      model = await this.urls.connectAny(this.connect, (url, err) => {
        if (this.urls.size > 1)
          log.warn({ err, broker: describeUrl(url) }, 'rabbitmq node did not answer; trying the next');
      });
    } catch (err) {
      throw unavailable('connect', err);
    }
    if (this.closed) {
      await model.close().catch(() => undefined);
      throw unavailable('connect', 'the frontier was closed while connecting');
    }
    coalesceWrites(model);
    const generation = (this.generation += 1);
    let link: Link | null = null;
    const flow: PublishFlow = { blocked: false, unblockedAt: 0 };
    model.on('error', (err: Error) => log.warn({ err, generation }, 'rabbitmq connection error'));
    model.on('handler-error', (err: Error, event: string) =>
      log.error({ err, event, generation }, 'rabbitmq connection listener threw'),
    );
    model.on('blocked', (reason: string) => {
      flow.blocked = true;
      log.warn({ reason, generation }, 'rabbitmq blocked publishing (resource alarm)');
    });
    model.on('unblocked', () => {
      flow.blocked = false;
      flow.unblockedAt = performance.now();
      log.info({ generation }, 'rabbitmq unblocked publishing');
    });
    model.on('close', () => {
      if (link !== null) this.down(link, model);
    });
    try {
      const channel = await model.createConfirmChannel();
      link = { generation, channel, model, alive: true, flow };
      const thisLink = link;
      channel.on('error', (err: Error) => log.warn({ err, generation }, 'rabbitmq channel error'));
      channel.on('handler-error', (err: Error, event: string) =>
        log.error({ err, event, generation }, 'rabbitmq channel listener threw'),
      );
      channel.on('close', () => this.down(thisLink, model));
      await this.options.setup(link);
      if (!link.alive) throw new Error('the link closed during setup');
    } catch (err) {
      if (link !== null) this.down(link, model, false);
      await model.close().catch(() => undefined);
      // A node shutting down may accept the connection and then close it: try another next time.
      this.urls.advance();
      throw err;
    }
    if (this.closed) {
      this.down(link, model, false);
      await model.close().catch(() => undefined);
      throw unavailable('connect', 'the frontier was closed while connecting');
    }
    this.link = link;
    this.model = model;
    this.attempt = 0;
  }

  /** Once per link: mark it dead, tell the owner, close what is left, and reconnect if it was current. */
  private down(link: Link, model: ChannelModel | null, reconnect = true): void {
    if (!link.alive) return;
    link.alive = false;
    this.options.onDown(link);
    if (this.link !== link) return;
    this.link = null;
    this.model = null;
    // The channel may be gone with the connection still up; close it so nothing lingers.
    void model?.close().catch(() => undefined);
    if (reconnect) {
      // The node may be gone: the next connect starts at the next node of the cluster.
      this.urls.advance();
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer !== null) return;
    const { initialBackoffMs = 100, maxBackoffMs = 10_000 } = this.options;
    const base = Math.min(maxBackoffMs, initialBackoffMs * 2 ** this.attempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    const attempt = (this.attempt += 1);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.open().then(
        () =>
          this.options.logger.info(
            { generation: this.generation, attempt, broker: this.broker },
            'reconnected to rabbitmq',
          ),
        (err: unknown) => {
          this.options.logger.warn({ err, attempt }, 'rabbitmq reconnect failed; trying again');
          this.scheduleReconnect();
        },
      );
    }, delay);
  }
}

async function closeWithin(model: ChannelModel, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([model.close().catch(() => undefined), timeout]);
  clearTimeout(timer);
}

/** Acks a delivery on its own link; a delivery of a dead link is stale and left alone. */
export function ackOn(link: Link, message: Message): void {
  if (!link.alive) return;
  try {
    link.channel.ack(message);
  } catch {
    // The channel closed a moment ago; the broker has put the message back.
  }
}

/** Hands a delivery back to the queue (attempt unchanged); a no-op on a dead link. */
export function requeueOn(link: Link, message: Message): void {
  if (!link.alive) return;
  try {
    link.channel.nack(message, false, true);
  } catch {
    // As in ackOn.
  }
}
