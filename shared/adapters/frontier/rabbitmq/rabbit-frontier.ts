import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../logger.js';
import type {
  Frontier,
  FrontierStats,
  LeaseOptions,
  PushOptions,
  RunControl,
  Settlement,
  SettleResult,
  TaskView,
} from '../../../ports/frontier.js';
import type { Lease, NewTask } from '../../../protocol/task.js';
import { assertNewTasks, assertSettlement } from '../task-input.js';
import { BrokerLink, requeueOn, type Link } from './broker-link.js';
import { claimSettlement, FrontierWriter } from './frontier-writer.js';
import { DeliveryIntake } from './delivery-intake.js';
import { Ledger, LedgerState } from './ledger.js';
import { LeaseBook, toLease } from './lease-book.js';
import { OutgoingMessages } from './outgoing-messages.js';
import { Publisher } from './publisher.js';
import { QueueCounts } from './queue-counts.js';
import { closedError, toRabbitError, topologyError, unavailable } from './rabbit-errors.js';
import {
  checkLeaseMs,
  MAX_HOLD_MS,
  resolveOptions,
  type RabbitFrontierOptions,
  type ResolvedOptions,
} from './rabbit-options.js';
import { assertTopology, queueNames, type QueueNames } from './topology.js';

export { MAX_LEASE_MS, type RabbitFrontierOptions } from './rabbit-options.js';

export interface RabbitFrontier extends Frontier {
  readonly queues: QueueNames;
  readonly retryDelayBucketsMs: readonly number[];
  /** True while a link to the broker is up. */
  readonly connected: boolean;
  /** Duplicate messages acked at delivery: the ledger had their outcome, or a copy was already held. */
  readonly duplicatesDropped: number;
  /** Deliveries set aside so far because their host had to wait (see LeaseOptions.hostWaitMs). */
  readonly setAsideCount: number;
}

/** A host that can take its task within this long keeps it in the window. */
const MIN_SET_ASIDE_MS = 1_000;
/** Set-aside tasks come back at least this often, to see whether their host can take them. */
const MAX_SET_ASIDE_MS = 300_000;

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

/**
 * Opens the RabbitMQ frontier: declares the queues, opens the ledger, starts consuming. Rejects
 * with FRONTIER_UNAVAILABLE when the broker cannot be reached, FRONTIER_TOPOLOGY when the queues
 * exist with other arguments.
 *
 * How the port maps onto the broker:
 * - push/settle publish first (confirmed), then record in the ledger, then (settle) ack. A crash in
 *   between costs a duplicate message, never a URL; a leftover whose outcome the ledger has is
 *   dropped when it is delivered.
 * - lease hands out deliveries from an in-process buffer that the channel's prefetch bounds. A lease
 *   id names the link generation and delivery tag; expiry runs on `clock` and hands the message back
 *   to the broker (nack, requeue) when lease() or stats() notices it.
 * - after a lost link every lease is stale: the broker puts the messages back and they are leased
 *   again. Nothing is ever acked on a channel other than the one that delivered it.
 */
export async function openRabbitFrontier(options: RabbitFrontierOptions): Promise<RabbitFrontier> {
  const frontier = new RabbitFrontierImpl(options);
  await frontier.start();
  return frontier;
}

class RabbitFrontierImpl implements RabbitFrontier {
  readonly queues: QueueNames;
  readonly retryDelayBucketsMs: readonly number[];
  private readonly opts: ResolvedOptions;
  private readonly clock: () => number;
  private readonly log: Logger;
  private readonly ledger: Ledger;
  private readonly book: LeaseBook;
  private readonly publisher: Publisher;
  private readonly counts: QueueCounts;
  private readonly intake: DeliveryIntake;
  private readonly writer: FrontierWriter;
  private readonly link: BrokerLink;
  /** push and settle run one at a time: dedup against the ledger must see the previous call's rows. */
  private tail: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  /** A delivery was nacked back to the queue since the last catchUp (see there). */
  private handedBack = false;
  private setAside = 0;

  constructor(options: RabbitFrontierOptions) {
    const opts = (this.opts = resolveOptions(options));
    this.retryDelayBucketsMs = opts.buckets;
    this.queues = queueNames(opts.prefix);
    this.clock = opts.clock;
    this.log = options.logger;
    const token = randomBytes(6).toString('base64url');
    this.book = new LeaseBook(token);
    this.counts = new QueueCounts(this.queues, opts.buckets, options.statsCacheMs ?? 200);
    this.link = new BrokerLink({
      url: options.url,
      ...(options.connect === undefined ? {} : { connect: options.connect }),
      logger: this.log,
      setup: (link) => this.setup(link),
      onDown: (link) => this.onLinkDown(link),
    });
    this.publisher = new Publisher({
      token,
      confirmTimeoutMs: options.confirmTimeoutMs ?? 30_000,
      resetLink: (reason) => this.link.reset(reason),
    });
    this.ledger = new Ledger(options.ledgerPath);
    this.intake = new DeliveryIntake({
      ledger: this.ledger,
      book: this.book,
      publisher: this.publisher,
      names: this.queues,
      buckets: opts.buckets,
      clock: this.clock,
      logger: this.log,
      priorityOf: opts.priorityOf,
      onQueuesChanged: () => this.counts.invalidate(),
    });
    this.writer = new FrontierWriter({
      ledger: this.ledger,
      book: this.book,
      publisher: this.publisher,
      outgoing: new OutgoingMessages(this.queues, opts.buckets, opts.priorityOf),
      clock: this.clock,
      logger: this.log,
      onQueuesChanged: () => this.counts.invalidate(),
    });
  }

  get connected(): boolean {
    return this.link.current !== null;
  }

  get duplicatesDropped(): number {
    return this.intake.duplicates;
  }

  get setAsideCount(): number {
    return this.setAside;
  }

  async start(): Promise<void> {
    try {
      await this.link.start();
    } catch (err) {
      await this.link.close();
      this.ledger.close();
      throw err;
    }
  }

  async push(tasks: readonly NewTask[], options: PushOptions = {}): Promise<NewTask[]> {
    this.assertOpen();
    assertNewTasks(tasks);
    return this.exclusive('push', () => this.writer.push(this.link.require('push'), tasks, options.maxTotal));
  }

  async lease(max: number, options: LeaseOptions = {}): Promise<Lease[]> {
    this.assertOpen();
    if (!(max >= 1)) return [];
    const limit = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
    const leaseMs = options.leaseMs ?? this.opts.leaseMs;
    checkLeaseMs(leaseMs);
    const link = this.link.require('lease');
    this.handBackOverdue();
    const exclude = new Set(options.excludeHosts ?? []);
    const got = this.book.take(limit, exclude, link, this.clock() + leaseMs);
    if (got.length < limit && this.book.held + this.intake.moving < this.opts.prefetch) {
      await this.catchUp(link);
      got.push(...this.book.take(limit - got.length, exclude, link, this.clock() + leaseMs));
    }
    if (got.length < limit && options.hostWaitMs !== undefined && exclude.size > 0) {
      this.setAsideWaiting(link, exclude, options.hostWaitMs);
    }
    return got.map(toLease);
  }

  /**
   * No head-of-line blocking: when at least half the prefetch window holds deliveries of hosts
   * that must wait (politeness, a cool-down), those whose host waits a while go to a delay queue
   * for about that long, and the window fills with other hosts' tasks. Memory stays bounded by the
   * window however many URLs a slow host has waiting.
   */
  private setAsideWaiting(
    link: Link,
    exclude: ReadonlySet<string>,
    hostWaitMs: (host: string) => number,
  ): void {
    if (this.book.buffered < Math.max(1, Math.floor(this.opts.prefetch / 2))) return;
    const waits = new Map<string, number | null>();
    const items = this.book.takeToPark(link, (delivery) => {
      const host = delivery.task.host;
      if (!exclude.has(host)) return null;
      let delay = waits.get(host);
      if (delay === undefined) {
        const wait = hostWaitMs(host);
        delay = Number.isFinite(wait) && wait >= MIN_SET_ASIDE_MS ? Math.min(wait, MAX_SET_ASIDE_MS) : null;
        if (!Number.isFinite(wait)) delay = MIN_SET_ASIDE_MS;
        waits.set(host, delay);
      }
      return delay;
    });
    if (items.length === 0) return;
    this.setAside += items.length;
    this.log.debug(
      { deliveries: items.length, hosts: waits.size },
      'setting aside deliveries of waiting hosts',
    );
    void this.exclusive('park', () => this.writer.park(link, items)).catch((err: unknown) => {
      for (const { delivery } of items) this.book.unpark(delivery);
      this.log.warn({ err, deliveries: items.length }, 'could not set deliveries aside; keeping them');
    });
  }

  /**
   * Waits until deliveries the broker owes this channel have arrived: messages published or handed
   * back by this process before now. The broker's channel process handles its mailbox in order, so
   * a passive declare is answered after the deliveries queued ahead of it. A handed-back message is
   * redelivered while the channel waits on the queue for that declare's answer, so it queues behind
   * it: a second declare is answered after it.
   */
  private async catchUp(link: Link): Promise<void> {
    const rounds = this.handedBack ? 2 : 1;
    this.handedBack = false;
    try {
      for (let i = 0; i < rounds; i++) await link.channel.checkQueue(this.queues.tasks);
    } catch (err) {
      throw unavailable('lease', err);
    }
    if (!link.alive) throw unavailable('lease', 'the channel closed');
  }

  async settle(batch: Settlement): Promise<SettleResult> {
    this.assertOpen();
    assertSettlement(batch);
    const claimed = claimSettlement(this.book, batch);
    const empty = batch.acks.length + batch.retries.length + batch.failures.length === 0;
    return this.exclusive('settle', async () => {
      try {
        // During an outage the whole batch fails, to be retried (its leases will be stale by then).
        const link = empty ? null : this.link.require('settle');
        if (link === null || claimed.all.length === 0) {
          if (batch.checkpoint !== undefined) this.ledger.record({ checkpoint: batch.checkpoint });
          return { applied: 0, accepted: 0 };
        }
        if (claimed.all.some((held) => held.link !== link)) throw unavailable('settle', 'the channel closed');
        return await this.writer.settle(link, claimed, batch);
      } catch (err) {
        for (const held of claimed.all) this.book.unclaim(held);
        throw err;
      }
    });
  }

  /** From the ledger (state, attempt) and what this process holds; the broker's queues are not searched. */
  async inspect(runId: string, url: string): Promise<TaskView | null> {
    this.assertOpen();
    const entry = this.ledger.lookup(url);
    if (entry === undefined) return null;
    const base = { runId, url, attempt: entry.attempt, availableAt: null, depth: null, parentUrl: null };
    if (entry.state === LedgerState.done) return { ...base, state: 'done', lastError: null };
    const held = this.book.find(url);
    if (entry.state === LedgerState.failed) return { ...base, state: 'failed', lastError: null };
    if (held === undefined) return { ...base, state: 'pending', lastError: null };
    return {
      ...base,
      state: held.leased ? 'leased' : 'queued',
      attempt: held.delivery.task.attempt,
      lastError: held.delivery.task.lastError,
      depth: held.delivery.task.depth,
      parentUrl: held.delivery.task.parentUrl,
    };
  }

  isLeaseLive(lease: LeaseRef): boolean {
    return this.book.isLive(lease);
  }

  async release(leases: readonly LeaseRef[]): Promise<void> {
    this.assertOpen();
    let any = false;
    for (const ref of leases) {
      const held = this.book.release(ref);
      if (held === undefined) continue;
      requeueOn(held.link, held.message);
      any = true;
    }
    if (any) {
      this.handedBack = true;
      this.counts.invalidate();
    }
  }

  async renew(leases: readonly LeaseRef[], leaseMs: number): Promise<void> {
    this.assertOpen();
    checkLeaseMs(leaseMs);
    const until = this.clock() + leaseMs;
    for (const ref of leases) this.book.renew(ref, until);
  }

  /**
   * ready: the tasks queue's ready count plus the buffer; delayed: the delay queues plus messages
   * being moved there; leased: leases and leases being settled; done/failed/total: the ledger.
   * URLs the ledger holds as pending that no count shows (a message between the broker and this
   * process) are added to ready, so the sum never drops to 0 while work remains.
   */
  async stats(): Promise<FrontierStats> {
    this.assertOpen();
    const link = this.link.require('stats');
    this.handBackOverdue();
    let queued;
    try {
      queued = await this.counts.read(link);
    } catch (err) {
      throw unavailable('stats', err);
    }
    const { total, done, failed } = this.ledger.counts;
    let ready = queued.tasks + this.book.buffered;
    const delayed = queued.delayed + this.intake.moving + this.book.parked;
    const leased = this.book.leased;
    const unseen = total - done - failed - (ready + delayed + leased);
    if (unseen > 0) ready += unseen;
    return { ready, delayed, leased, done, failed, total, cancelled: 0 };
  }

  // Run control lands with the per-run quorum-queue topology (the next commit).
  async pauseRun(_runId: string): Promise<void> {
    throw unavailable('pauseRun', 'run control is not in this build of the RabbitMQ frontier yet');
  }

  async resumeRun(_runId: string): Promise<void> {
    throw unavailable('resumeRun', 'run control is not in this build of the RabbitMQ frontier yet');
  }

  async cancelRun(_runId: string): Promise<number> {
    throw unavailable('cancelRun', 'run control is not in this build of the RabbitMQ frontier yet');
  }

  async runs(): Promise<RunControl[]> {
    return [];
  }

  async checkpoint(): Promise<string | null> {
    this.assertOpen();
    return this.ledger.checkpoint;
  }

  /**
   * Gives a running push or settle up to 5 s to finish, hands back what is buffered or leased,
   * disconnects (a settle still publishing then fails as retriable), closes the ledger.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await within(this.tail, 5_000);
      const back = this.book.drain();
      for (const delivery of back) requeueOn(delivery.link, delivery.message);
      await this.link.close();
      await this.tail;
      this.ledger.close();
    })());
  }

  private async setup(link: Link): Promise<void> {
    const channel = link.channel;
    try {
      await assertTopology(channel, this.queues, this.opts.buckets);
    } catch (err) {
      throw (err as { code?: unknown }).code === 406 ? topologyError(err) : unavailable('connect', err);
    }
    this.publisher.attach(link);
    this.counts.invalidate();
    await channel.prefetch(this.opts.prefetch);
    await channel.consume(
      this.queues.tasks,
      (message) => {
        if (message === null) this.link.reset('the broker cancelled the consumer (queue deleted?)');
        else this.intake.accept(link, message);
      },
      { noAck: false },
    );
  }

  private onLinkDown(link: Link): void {
    const dropped = this.book.dropLink(link);
    this.counts.invalidate();
    if (this.closing === null) {
      this.log.warn(
        { generation: link.generation, staleDeliveries: dropped },
        'rabbitmq link lost; its leases are stale and the broker will deliver their messages again',
      );
    }
  }

  /** Expired leases, and deliveries held close to the broker's consumer timeout, go back to the queue. */
  private handBackOverdue(): void {
    const { expired, tooOld } = this.book.takeOverdue(this.clock(), Date.now() - MAX_HOLD_MS);
    for (const d of [...expired, ...tooOld]) requeueOn(d.link, d.message);
    if (tooOld.length > 0) {
      this.log.warn(
        { deliveries: tooOld.length, maxHoldMs: MAX_HOLD_MS },
        'handing back deliveries held close to the consumer timeout',
      );
    }
    if (expired.length + tooOld.length > 0) {
      this.handedBack = true;
      this.counts.invalidate();
    }
  }

  private exclusive<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn).catch((err: unknown) => {
      throw toRabbitError(err, op);
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private assertOpen(): void {
    if (this.closing !== null) throw closedError();
  }
}

/** Waits for `promise` (which never rejects) or `ms`, whichever comes first. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
