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
import { PRIORITY_LEVELS, TOP_LEVEL } from '../../../protocol/task-priority.js';
import { hostOfNormalized } from '../../../url/host-of-normalized.js';
import type { Lease, NewTask } from '../../../protocol/task.js';
import { LevelPicker } from '../level-picker.js';
import { runCancelledError } from '../run-errors.js';
import { assertNewTasks, assertRunId, assertSettlement } from '../task-input.js';
import { ackOn, BrokerLink, requeueOn, type Link } from './broker-link.js';
import { claimSettlement, FrontierWriter } from './frontier-writer.js';
import { DeliveryIntake } from './delivery-intake.js';
import { RunSweeper } from '../run-sweeper.js';
import { Ledger, LedgerState, type LedgerRun } from './ledger.js';
import { LeaseBook, toLease, type Delivery, type Held } from './lease-book.js';
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
import { checkOldLayout } from './old-layout.js';
import { deleteQueuesIfIdle } from './queue-check.js';
import { runStats } from './run-stats.js';
import { ShardMembership, type RunCounts } from './shard-membership.js';
import { sqlSharedSeen, type SharedSeen } from './shared-seen.js';
import { shardsOwnedBy } from './shards.js';
import { CapacityWeight } from './capacity-weight.js';
import { assertRunQueues, assertTopology, queueNames, runQueueNames, type QueueNames } from './topology.js';

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
  /** Unacked deliveries held now: buffered, leased, being settled or set aside. */
  readonly heldDeliveries: number;
  /** False while setDemand(false) holds: no run's queues are consumed. */
  readonly demanded: boolean;
  /** The shards whose queues this process consumes now (always [0] when hosts are not split). */
  readonly ownedShards: readonly number[];
  setDemand(wanted: boolean): Promise<void>;
  setCapacity(slots: number): void;
  pacesHost(host: string): boolean;
  countRequestsOut(count: (hosts: (host: string) => boolean) => number): void;
  publishBlocked(): boolean;
  retireRun(runId: string): Promise<void>;
}

/** A host that can take its task within this long keeps it in the window. */
const MIN_SET_ASIDE_MS = 1_000;
/** Set-aside tasks come back at least this often, to see whether their host can take them. */
const MAX_SET_ASIDE_MS = 300_000;
/** How long lease() waits for deliveries the broker has ready and is about to send (see catchUp). */
const ARRIVAL_WAIT_MS = 100;

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

/** What one link has declared and consumes: runs whose queues exist, and consumer tags per run and shard. */
interface LinkRuns {
  declared: Map<string, Promise<void>>;
  consuming: Map<string, Map<number, Promise<string[]>>>;
}

/**
 * Opens the RabbitMQ frontier: declares the queues (see topology.ts), opens the ledger, starts
 * consuming every active run. Rejects with FRONTIER_UNAVAILABLE when the broker cannot be reached,
 * FRONTIER_TOPOLOGY when the queues exist with other arguments, FRONTIER_OLD_LAYOUT when the
 * prefix or the ledger holds a crawl of the layout before runs.
 *
 * How the port maps onto the broker:
 * - push/settle publish first (confirmed), then record in the ledger, then (settle) ack. A crash in
 *   between costs a duplicate message, never a URL; a leftover whose outcome the ledger has is
 *   dropped when it is delivered. A run is in the ledger before its first message is published.
 * - lease hands out deliveries from an in-process buffer that the consumers' prefetch bounds, by
 *   level (LevelPicker) across every run's level queues. A lease id names the link generation and
 *   delivery tag; expiry runs on `clock` and hands the message back to the broker (nack, requeue)
 *   when lease() or stats() notices it.
 * - pause cancels the run's consumers and hands back what was buffered: its messages stay ready
 *   in its queues, delivered to no one, until resume consumes them again. cancel also deletes its
 *   queues; its retries coming back from a delay queue land in the orphans queue and are dropped.
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
  private readonly sweeper: RunSweeper;
  private readonly sharedSeen: SharedSeen | null;
  /** Per run, the counters last written to the shared store (`total,done,failed`). */
  private readonly reported = new Map<string, string>();
  /** The write (and read) of counters in flight, so heartbeats never stack them up. */
  private countsSync: Promise<void> | null = null;
  private ticks = 0;
  private readonly book: LeaseBook;
  private readonly picker = new LevelPicker();
  private readonly publisher: Publisher;
  private readonly counts: QueueCounts;
  private readonly intake: DeliveryIntake;
  private readonly writer: FrontierWriter;
  private readonly link: BrokerLink;
  private readonly linkRuns = new WeakMap<Link, LinkRuns>();
  /** push, settle and run control run one at a time: dedup against the ledger must see the previous call's rows. */
  private tail: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  /** A delivery was nacked back to the queue since the last catchUp (see there). */
  private handedBack = false;
  private setAside = 0;
  /** `runId\nurl` of the failed URLs requeue() is putting back now (see DeliveryIntake). */
  private readonly requeueing = new Set<string>();
  /** lease() calls waiting for the next delivery (see catchUp). */
  private arrivalWaiters: (() => void)[] = [];
  /** See setDemand: while false, no run's queues are consumed. */
  private demand = true;
  /** The crawler capacity served now (setCapacity), and the weight announced for it. */
  private capacity = 0;
  private readonly weight: CapacityWeight;
  /** Hosts split among the schedulers of the prefix (see shards.ts): who the others are. */
  private readonly membership: ShardMembership | null;
  /** Shards whose queues this process consumes: shard 0 for good when hosts are not split. */
  private readonly owned = new Set<number>();
  /**
   * Shards given up whose leases, or other requests (countRequestsOut), are still out: announced as
   * held, so no one takes them yet.
   */
  private readonly draining = new Set<number>();
  /** Requests out besides leases, to the hosts a predicate accepts (countRequestsOut). */
  private requestsOut: (hosts: (host: string) => boolean) => number = () => 0;
  private shardTimer: NodeJS.Timeout | null = null;
  private rebalancing = false;
  private readonly takenListeners: ((taken: (host: string) => boolean) => void)[] = [];
  /** Per run, since when (Date.now()) it has looked empty everywhere (see stats). */
  private readonly emptySince = new Map<string, number>();

  constructor(options: RabbitFrontierOptions) {
    const opts = (this.opts = resolveOptions(options));
    this.retryDelayBucketsMs = opts.buckets;
    this.queues = queueNames(opts.prefix, opts.shards);
    this.membership =
      opts.shards > 1
        ? new ShardMembership({
            id: opts.memberId,
            names: this.queues,
            heartbeatMs: opts.shardHeartbeatMs,
            logger: options.logger,
          })
        : null;
    if (this.membership === null) this.owned.add(0);
    // A quarter off for three heartbeats: a crawler restarting or credit dipping moves no shard.
    this.weight = new CapacityWeight({ tolerance: 0.25, settleMs: opts.shardHeartbeatMs * 3 });
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
      ...(options.publishTimer ? { publishTimer: options.publishTimer } : {}),
    });
    this.ledger = new Ledger(options.ledgerPath, undefined, opts.shards > 1 ? 'uncounted' : 'counted');
    this.sweeper = new RunSweeper({
      rows: this.ledger,
      holds: (runId) => this.book.leasedOf(runId) + this.book.bufferedOf(runId) > 0,
      logger: this.log.child({ module: 'ledger-sweeper' }),
    });
    this.sharedSeen =
      opts.shards > 1 && options.sharedSeen
        ? sqlSharedSeen({
            repo: options.sharedSeen,
            scope: opts.prefix,
            schedulerId: opts.memberId,
            clock: this.clock,
            logger: this.log.child({ module: 'shared-seen' }),
          })
        : null;
    const ensureRunQueues = (link: Link, runId: string): Promise<void> => this.ensureRunQueues(link, runId);
    this.intake = new DeliveryIntake({
      ledger: this.ledger,
      book: this.book,
      publisher: this.publisher,
      names: this.queues,
      buckets: opts.buckets,
      clock: this.clock,
      logger: this.log,
      ensureRunQueues,
      onQueuesChanged: () => this.counts.invalidate(),
      requeueing: (runId, url) => this.requeueing.has(`${runId}\n${url}`),
      onBuffered: () => {
        const waiters = this.arrivalWaiters;
        this.arrivalWaiters = [];
        for (const wake of waiters) wake();
      },
    });
    this.writer = new FrontierWriter({
      ledger: this.ledger,
      book: this.book,
      publisher: this.publisher,
      outgoing: new OutgoingMessages(this.queues, opts.buckets),
      clock: this.clock,
      logger: this.log,
      ensureRunQueues,
      onQueuesChanged: () => this.counts.invalidate(),
      acceptedElsewhere: (runId) => this.membership?.countsElsewhere(runId)[0] ?? 0,
      ...(this.sharedSeen ? { sharedSeen: this.sharedSeen } : {}),
    });
  }

  get connected(): boolean {
    return this.link.current !== null;
  }

  get duplicatesDropped(): number {
    return this.intake.duplicates;
  }

  get heldDeliveries(): number {
    return this.book.held;
  }

  get demanded(): boolean {
    return this.demand;
  }

  get setAsideCount(): number {
    return this.setAside;
  }

  onHostsTaken(listener: (taken: (host: string) => boolean) => void): void {
    this.takenListeners.push(listener);
  }

  countRequestsOut(count: (hosts: (host: string) => boolean) => number): void {
    this.requestsOut = count;
  }

  pacesHost(host: string): boolean {
    if (this.membership === null) return true;
    const shard = this.queues.shardOf(host);
    return this.owned.has(shard) || this.draining.has(shard);
  }

  get ownedShards(): readonly number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    try {
      await this.link.start();
    } catch (err) {
      await this.link.close();
      this.ledger.close();
      throw err;
    }
    try {
      for (const runId of this.ledger.runsToSweep()) this.sweeper.add(runId);
    } catch (err) {
      this.log.warn({ err }, "could not list the finished runs' URL rows to delete; tried at the next start");
    }
    if (this.membership !== null) {
      this.shardTimer = setInterval(() => this.shardTick(), this.opts.shardHeartbeatMs);
      this.shardTimer.unref();
    }
  }

  async push(tasks: readonly NewTask[], options: PushOptions = {}): Promise<NewTask[]> {
    this.assertOpen();
    assertNewTasks(tasks);
    return this.exclusive('push', () => this.writer.push(this.link.require('push'), tasks, options.maxTotal));
  }

  /**
   * A URL that failed for good back into its run, as a fresh task (attempt 1, depth 0: a person
   * asked for it, so the run's depth limit does not keep it out). False when the ledger does not
   * have it failed (queued, in flight or done already: nothing to do) or the run is cancelled.
   */
  async requeue(runId: string, url: string): Promise<boolean> {
    this.assertOpen();
    assertRunId(runId);
    const host = hostOfNormalized(url);
    if (host === null || this.ledger.stateOf(runId) === 'cancelled') return false;
    const task: NewTask = { runId, url, host, depth: 0, priority: TOP_LEVEL, parentUrl: null };
    return this.exclusive('requeue', async () => {
      const key = `${runId}\n${url}`;
      this.requeueing.add(key);
      try {
        return await this.writer.requeue(this.link.require('requeue'), task);
      } finally {
        this.requeueing.delete(key);
      }
    });
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
    const take = (n: number): Held[] =>
      this.book.take(n, exclude, this.pausedRuns(), link, this.clock() + leaseMs, this.picker);
    let got = take(limit);
    if (got.length < limit && this.book.held + this.intake.moving < this.windowSize()) {
      await this.catchUp(link);
      // The wait can be long: a connection RabbitMQ blocks (a resource alarm) is not read at all,
      // so its queue checks hang until the alarm clears. Leases taken before it would have run out
      // meanwhile and gone back to the queue while also being handed out here (fetched twice):
      // those still held start their time now, and those gone back are not handed out.
      const until = this.clock() + leaseMs;
      got = got.filter((held) => this.book.renew(held, until));
      got.push(...take(limit - got.length));
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
   * back by this process before now. The channel process answers a passive declare after the
   * deliveries already in its mailbox; a quorum queue's delivery may reach that mailbox while the
   * channel waits on the queue for the declare's answer, so it queues behind it, and a second
   * declare is answered after it. A handed-back message takes one more round.
   *
   * Acks give no such order: a quorum queue sends the next deliveries once it has applied them,
   * after any declare. So when nothing arrived, the active runs' queues are asked whether they
   * hold ready messages; if they do, deliveries are on their way (the window has room), and the
   * lease waits for the next one, at most ARRIVAL_WAIT_MS.
   */
  private async catchUp(link: Link): Promise<void> {
    const handedBack = this.handedBack;
    const rounds = handedBack ? 3 : 2;
    this.handedBack = false;
    const before = this.book.buffered;
    try {
      for (let i = 0; i < rounds; i++) await link.channel.checkQueue(this.queues.orphans);
      // A handed-back message comes back once its queue has applied the requeue: it may not be
      // counted ready yet, so it is waited for as well.
      if (this.book.buffered === before && (handedBack || (await this.readyInActiveRuns(link)) > 0)) {
        await this.nextArrival(ARRIVAL_WAIT_MS);
        await link.channel.checkQueue(this.queues.orphans);
      }
    } catch (err) {
      throw unavailable('lease', err);
    }
    if (!link.alive) throw unavailable('lease', 'the channel closed');
  }

  /** Ready messages in the queues this link consumes. */
  private async readyInActiveRuns(link: Link): Promise<number> {
    let ready = 0;
    for (const [runId, shards] of this.linkRunsOf(link).consuming) {
      for (const [shard, tags] of shards) {
        await tags;
        for (const queue of runQueueNames(this.queues, runId, shard)) {
          ready += (await link.channel.checkQueue(queue)).messageCount;
        }
      }
    }
    return ready;
  }

  private nextArrival(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.arrivalWaiters.push(done);
    });
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
    assertRunId(runId);
    const entry = this.ledger.lookup(runId, url);
    if (entry === undefined) return null;
    const base = { runId, url, attempt: entry.attempt, availableAt: null, depth: null, parentUrl: null };
    if (entry.state === LedgerState.done) return { ...base, state: 'done', lastError: null };
    if (entry.state === LedgerState.failed) return { ...base, state: 'failed', lastError: null };
    const held = this.book.find(runId, url);
    if (held === undefined) {
      const cancelled = this.ledger.stateOf(runId) === 'cancelled';
      return { ...base, state: cancelled ? 'cancelled' : 'pending', lastError: null };
    }
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
      this.handBack(held);
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
   * Per run: ready is its level queues' ready count plus its buffered deliveries; leased its leases
   * and leases being settled; done/failed/total the ledger. What the ledger holds as pending that
   * neither count shows is in a delay queue (shared by every run, so split among the runs in
   * order) or on its way between the broker and this process (counted as ready), so the sum never
   * drops to 0 while work remains. A cancelled run's pending tasks count as cancelled. A retired
   * run has its counters only, and is left out of the sum of every run (which covers the runs
   * this frontier serves).
   */
  async stats(runId?: string): Promise<FrontierStats> {
    this.assertOpen();
    if (runId !== undefined) {
      assertRunId(runId);
      const retired = this.ledger.run(runId);
      // Over, and no longer served from the broker (retireRun): its counters, and its leases still
      // out if it was cancelled.
      if (retired?.retired === true) {
        const { total, done, failed } = retired;
        if (retired.state === 'cancelled') return this.cancelledStats(retired);
        return { ready: 0, delayed: 0, leased: 0, done, failed, total, cancelled: 0 };
      }
    }
    const link = this.link.require('stats');
    this.handBackOverdue();
    const runs = this.ledger.runs();
    const declared = this.linkRunsOf(link).declared;
    const counted = runs.filter((r) => r.state !== 'cancelled' && declared.has(r.runId)).map((r) => r.runId);
    let queued;
    try {
      await Promise.all(counted.map((id) => declared.get(id)));
      queued = await this.counts.read(link, counted);
    } catch (err) {
      throw unavailable('stats', err);
    }
    const membership = this.membership;
    const perRun = runStats(runs, {
      queued: queued.runs,
      waiting: queued.waiting + this.intake.moving + this.book.parked,
      bufferedOf: (id) => this.book.bufferedOf(id),
      leasedOf: (id) => this.book.leasedOf(id) + (membership?.busyElsewhere(id) ?? 0),
      ...(membership === null ? {} : { split: true }),
    });
    if (membership !== null) {
      // Each scheduler's ledger counts what it accepted and settled: the run's counters are the sum.
      for (const [id, stats] of perRun) {
        const [total, done, failed] = membership.countsElsewhere(id);
        perRun.set(id, {
          ...stats,
          total: stats.total + total,
          done: stats.done + done,
          failed: stats.failed + failed,
        });
      }
      this.holdOffEmpty(perRun);
    }
    if (runId !== undefined) {
      return (
        perRun.get(runId) ?? { ready: 0, delayed: 0, leased: 0, done: 0, failed: 0, total: 0, cancelled: 0 }
      );
    }
    const all = { ready: 0, delayed: 0, leased: 0, done: 0, failed: 0, total: 0, cancelled: 0 };
    for (const s of perRun.values()) {
      for (const key of Object.keys(all) as (keyof FrontierStats)[]) all[key] += s[key];
    }
    return all;
  }

  async pauseRun(runId: string): Promise<void> {
    this.assertOpen();
    assertRunId(runId);
    await this.exclusive('pauseRun', async () => {
      if (this.ledger.stateOf(runId) === 'cancelled') throw runCancelledError(runId);
      this.ledger.setState(runId, 'paused');
      const link = this.link.current;
      if (link === null) return;
      await this.stopConsuming(link, runId);
      // Declared, so that stats can count its queues and resume can consume them.
      await this.ensureRunQueues(link, runId);
    });
  }

  /**
   * No crawler to feed (false): cancels every run's consumers and hands back what is buffered, so
   * the broker gives it to other schedulers; leases out live on. True consumes the active runs again.
   */
  async setDemand(wanted: boolean): Promise<void> {
    this.assertOpen();
    await this.exclusive('setDemand', async () => {
      if (this.demand === wanted) return;
      this.demand = wanted;
      const link = this.link.current;
      if (link === null) return;
      if (this.membership !== null) {
        // The shards go to schedulers with crawlers; this one takes its share again when it has some.
        if (!wanted) for (const shard of [...this.owned]) await this.giveUp(link, shard);
        this.beat(link);
      } else {
        for (const run of this.ledger.runs()) {
          if (run.state === 'cancelled') continue;
          if (wanted) await this.ensureRunQueues(link, run.runId);
          else await this.stopConsuming(link, run.runId);
        }
      }
      this.log.info(
        { demand: wanted },
        wanted ? 'crawlers are here: consuming the runs again' : 'no crawlers: holding no deliveries',
      );
    });
  }

  publishBlocked(): boolean {
    return this.link.publishBlocked;
  }

  /**
   * The crawler capacity this scheduler serves (requests its crawlers run at once). With hosts
   * split, its share of the shards follows it (see CapacityWeight): a scheduler with three times
   * the crawlers of another paces three times the hosts. Without shards it changes nothing.
   */
  setCapacity(slots: number): void {
    if (this.closing !== null || !Number.isFinite(slots) || slots < 0) return;
    this.capacity = slots;
    this.weigh();
  }

  /**
   * With the shared store: writes this ledger's counters of the runs that changed since the last
   * write, and with `readOthers` reads the other schedulers' (those not members now count as
   * departed, see ShardMembership.rememberDeparted). Never rejects: the store out of reach is
   * logged by SharedSeen, and the next heartbeat tries again.
   */
  private syncCounts(readOthers: boolean): Promise<void> {
    const shared = this.sharedSeen;
    if (shared === null || this.membership === null || this.countsSync !== null) return Promise.resolve();
    const changed: { runId: string; total: number; done: number; failed: number; said: string }[] = [];
    for (const run of this.ledger.runs()) {
      const said = `${run.total},${run.done},${run.failed}`;
      if (this.reported.get(run.runId) !== said) changed.push({ ...run, said });
    }
    const membership = this.membership;
    const sync = (async () => {
      const counts = changed.map(({ runId, total, done, failed }) => ({ runId, total, done, failed }));
      if (counts.length > 0 && (await shared.report(counts))) {
        for (const c of changed) this.reported.set(c.runId, c.said);
      }
      if (!readOthers) return;
      const others = await shared.othersCounts();
      if (others !== null) membership.rememberDeparted(others);
    })().finally(() => {
      this.countsSync = null;
    });
    this.countsSync = sync;
    return sync;
  }

  /** Announces a new weight at once (the next heartbeat moves the shards) when it changed. */
  private weigh(): void {
    if (this.membership === null || !this.weight.observe(this.capacity, Date.now())) return;
    this.log.info(
      { weight: this.weight.weight },
      "this scheduler's crawler capacity changed: its share of the shards follows",
    );
    const link = this.link.current;
    if (link !== null) this.beat(link);
  }

  async resumeRun(runId: string): Promise<void> {
    this.assertOpen();
    assertRunId(runId);
    await this.exclusive('resumeRun', async () => {
      if (this.ledger.stateOf(runId) === 'cancelled') throw runCancelledError(runId);
      this.ledger.setState(runId, 'active');
      const link = this.link.current;
      if (link !== null) await this.ensureRunQueues(link, runId);
    });
  }

  /**
   * Records the run cancelled, stops its consumers, hands back what was buffered and deletes its
   * queues (at the next connect if the broker is out of reach now). Counts the run's pending tasks
   * not leased: queued, delayed, buffered or on their way.
   */
  async cancelRun(runId: string): Promise<number> {
    this.assertOpen();
    assertRunId(runId);
    return this.exclusive('cancelRun', async () => {
      const known = this.ledger.run(runId);
      if (known?.state === 'cancelled' || known?.retired === true) return 0;
      this.ledger.setState(runId, 'cancelled');
      const { total, done, failed } = this.ledger.counts(runId);
      const removed = Math.max(0, total - done - failed - this.book.leasedOf(runId));
      const link = this.link.current;
      if (link !== null) await this.purgeRun(link, runId);
      this.counts.invalidate();
      return removed;
    });
  }

  /**
   * The run is over (its end recorded in SQL): durably retired in the ledger, then its consumers
   * cancelled (anything buffered handed back), and its queues deleted if the broker finds them
   * empty with no consumer; otherwise they stay, and are tried again at the next connect. A
   * cancelled run's queues went with the cancel (or go now, or at the next connect); its URL rows
   * go once this process holds none of its leases, whose outcomes are still settled against them.
   */
  async retireRun(runId: string): Promise<void> {
    this.assertOpen();
    assertRunId(runId);
    await this.exclusive('retireRun', async () => {
      const run = this.ledger.run(runId);
      if (run === undefined || run.retired) return;
      this.ledger.markRetired(runId);
      this.emptySince.delete(runId);
      this.reported.delete(runId);
      this.counts.invalidate();
      const link = this.link.current;
      if (run.state === 'cancelled') {
        if (!run.purged && link !== null) await this.purgeRun(link, runId);
        if (this.ledger.run(runId)?.purged === true) this.sweeper.add(runId);
        return;
      }
      if (link === null) return;
      await this.stopConsuming(link, runId);
      this.linkRunsOf(link).declared.delete(runId);
      await this.deleteIfIdle(link, runId);
    });
  }

  async runs(): Promise<RunControl[]> {
    this.assertOpen();
    return this.ledger
      .runs()
      .map(({ runId, state }) => ({ runId, state }))
      .sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
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
      if (this.shardTimer !== null) clearInterval(this.shardTimer);
      await within(this.tail, 5_000);
      // The last counters, so the others count this scheduler's pages exactly while it is away.
      await within(this.countsSync ?? Promise.resolve(), 2_000);
      await within(this.syncCounts(false), 2_000);
      const back = this.book.drain();
      for (const delivery of back) requeueOn(delivery.link, delivery.message);
      await this.link.close();
      await this.tail;
      await this.sweeper.close();
      this.ledger.close();
    })());
  }

  /**
   * On every new link: refuses the old layout, declares the shared queues and every run's, deletes
   * the queues of runs cancelled while the broker was away, consumes the orphans and every active run.
   */
  private async setup(link: Link): Promise<void> {
    const channel = link.channel;
    await checkOldLayout(link, this.opts.prefix);
    try {
      await assertTopology(channel, this.queues, this.opts.buckets);
    } catch (err) {
      throw (err as { code?: unknown }).code === 406 ? topologyError(err) : unavailable('connect', err);
    }
    this.linkRuns.set(link, { declared: new Map(), consuming: new Map() });
    this.publisher.attach(link);
    this.counts.invalidate();
    if (this.membership !== null) {
      // A new link consumes nothing yet: shards are taken once the others have been heard.
      this.owned.clear();
      this.draining.clear();
      await this.membership.attach(link);
    }
    // Per consumer (quorum queues have no channel-wide prefetch): each level queue of each run.
    await channel.prefetch(this.opts.prefetch);
    await channel.consume(
      this.queues.orphans,
      (message) => {
        if (message === null) this.link.reset('the broker cancelled the orphans consumer (queue deleted?)');
        else this.intake.acceptOrphan(link, message);
      },
      { noAck: false },
    );
    for (const run of this.ledger.runs()) {
      if (run.state === 'cancelled') {
        if (!run.purged) await this.purgeRun(link, run.runId);
      } else {
        await this.ensureRunQueues(link, run.runId);
      }
    }
    for (const run of this.ledger.retiredUndeleted()) {
      // Bookkeeping: a failure here must not keep the frontier from connecting.
      await this.deleteRetired(link, run).catch((err: unknown) =>
        this.log.warn(
          { err, runId: run.runId },
          "could not delete a finished run's queues; tried at the next connect",
        ),
      );
    }
    if (this.membership !== null) this.beat(link);
  }

  /**
   * Declares a run's queues on `link` once, and consumes them while the run is active. Callers
   * that run concurrently share one declaration.
   */
  private ensureRunQueues(link: Link, runId: string): Promise<void> {
    // A run that is over is not served again; its tasks that come back go to the failed queue.
    if (this.ledger.isRetired(runId)) return Promise.resolve();
    const runs = this.linkRunsOf(link);
    let declared = runs.declared.get(runId);
    if (declared === undefined) {
      declared = assertRunQueues(link.channel, this.queues, runId);
      runs.declared.set(runId, declared);
      declared.catch(() => runs.declared.delete(runId));
    }
    return declared.then(async () => {
      if (!this.demand || this.ledger.stateOf(runId) !== 'active') return;
      for (const shard of [...this.owned]) {
        let shards = runs.consuming.get(runId);
        if (shards === undefined) runs.consuming.set(runId, (shards = new Map()));
        let tags = shards.get(shard);
        if (tags === undefined) {
          const forShard = shards;
          tags = this.consumeQueues(link, runQueueNames(this.queues, runId, shard));
          forShard.set(shard, tags);
          tags.catch(() => forShard.delete(shard));
        }
        await tags;
      }
    });
  }

  private async consumeQueues(link: Link, queues: readonly string[]): Promise<string[]> {
    const tags: string[] = [];
    for (const queue of queues) {
      const { consumerTag } = await link.channel.consume(
        queue,
        (message) => {
          if (message === null)
            this.link.reset(`the broker cancelled the consumer of ${queue} (queue deleted?)`);
          else this.intake.accept(link, message);
        },
        { noAck: false },
      );
      tags.push(consumerTag);
    }
    return tags;
  }

  /**
   * Cancels the run's consumers, then hands its buffered deliveries back: once the broker confirmed
   * the cancel, nothing more of the run arrives, so the handed-back messages stay ready.
   */
  private async stopConsuming(link: Link, runId: string): Promise<void> {
    const runs = this.linkRunsOf(link);
    const shards = runs.consuming.get(runId);
    runs.consuming.delete(runId);
    await this.cancelConsumers(link, [...(shards?.values() ?? [])]);
    this.handBackBuffered(this.book.takeRun(runId));
  }

  /** Like stopConsuming, for one shard of every run: the shard is given up. */
  private async stopConsumingShard(link: Link, shard: number): Promise<void> {
    const cancelled: Promise<string[]>[] = [];
    for (const shards of this.linkRunsOf(link).consuming.values()) {
      const tags = shards.get(shard);
      shards.delete(shard);
      if (tags !== undefined) cancelled.push(tags);
    }
    await this.cancelConsumers(link, cancelled);
    this.handBackBuffered(this.book.takeWhere(this.inShard(shard)));
  }

  private async cancelConsumers(link: Link, consumers: readonly Promise<string[]>[]): Promise<void> {
    try {
      for (const tags of consumers) {
        for (const tag of await tags) await link.channel.cancel(tag);
      }
    } catch (err) {
      throw unavailable('stop consuming', err);
    }
  }

  private handBackBuffered(back: readonly Delivery[]): void {
    for (const delivery of back) requeueOn(delivery.link, delivery.message);
    if (back.length > 0) {
      this.handedBack = true;
      this.counts.invalidate();
    }
  }

  private inShard(shard: number): (delivery: Delivery) => boolean {
    return (delivery) => this.queues.shardOf(delivery.task.host) === shard;
  }

  /** Leases and other requests (robots.txt fetches) out to the hosts of `shard`. */
  private outIn(shard: number): number {
    return (
      this.book.outWhere(this.inShard(shard)) +
      this.requestsOut((host) => this.queues.shardOf(host) === shard)
    );
  }

  /** Stops consuming a shard; while requests to its hosts are out it stays announced as held (draining). */
  private async giveUp(link: Link, shard: number): Promise<void> {
    await this.stopConsumingShard(link, shard);
    this.owned.delete(shard);
    if (this.outIn(shard) > 0) this.draining.add(shard);
  }

  /** Every heartbeat: say what this process holds, then see whether shards should move. */
  private shardTick(): void {
    const link = this.link.current;
    if (link === null || this.closing !== null || this.membership === null) return;
    this.weigh();
    this.beat(link);
    // Every heartbeat, the counters that changed; every tenth, the others' as the store has them.
    void this.syncCounts(this.ticks++ % 10 === 0);
    if (this.rebalancing) return;
    this.rebalancing = true;
    void this.exclusive('rebalance', () => this.rebalance(link))
      .catch((err: unknown) =>
        this.log.warn({ err }, 'could not move shards; trying again at the next heartbeat'),
      )
      .finally(() => {
        this.rebalancing = false;
      });
  }

  private beat(link: Link): void {
    const counts: Record<string, RunCounts> = {};
    for (const run of this.ledger.runs()) counts[run.runId] = [run.total, run.done, run.failed];
    this.membership?.beat(link, {
      held: [...this.owned, ...this.draining],
      demand: this.demand,
      capacity: this.weight.weight,
      busy: this.book.heldPerRun(),
      counts,
    });
  }

  /**
   * Shards follow rendezvous hashing over the schedulers that want work. One this process no longer
   * wins is given up: its consumers cancelled, its buffered deliveries handed back, its leases left
   * to settle (it stays announced as held until they have). One it wins is taken once no other
   * scheduler announces it, so two never hand out the same host's tasks at once.
   */
  private async rebalance(link: Link): Promise<void> {
    const membership = this.membership;
    if (membership === null || !link.alive || this.link.current !== link) return;
    await membership.sweep(link);
    for (const shard of [...this.draining]) {
      if (this.outIn(shard) === 0) this.draining.delete(shard);
    }
    if (!membership.settled) return;
    const wanted = new Set(
      this.demand
        ? shardsOwnedBy(membership.id, membership.candidates(this.weight.weight), this.queues.shards)
        : [],
    );
    const given: number[] = [];
    for (const shard of [...this.owned]) {
      if (wanted.has(shard)) continue;
      await this.giveUp(link, shard);
      given.push(shard);
    }
    const taken: number[] = [];
    for (const shard of wanted) {
      if (this.owned.has(shard) || this.draining.has(shard) || membership.heldByOther(shard)) continue;
      this.owned.add(shard);
      taken.push(shard);
    }
    if (taken.length > 0) {
      // Before the first delivery: the scheduler counts a request to each of their hosts now.
      const shards = new Set(taken);
      const isTaken = (host: string): boolean => shards.has(this.queues.shardOf(host));
      for (const listener of this.takenListeners) listener(isTaken);
      for (const run of this.ledger.runs()) {
        if (run.state === 'active') await this.ensureRunQueues(link, run.runId);
      }
    }
    if (given.length + taken.length === 0) return;
    this.counts.invalidate();
    this.beat(link);
    this.log.info(
      {
        taken,
        given,
        owned: this.ownedShards,
        draining: [...this.draining],
        schedulers: membership.peerCount + 1,
      },
      'shards moved',
    );
  }

  /**
   * A run seen empty (nothing ready, delayed or held anywhere) counts one task ready until it has
   * stayed so for three heartbeats: a peer that just took its last delivery from the broker says
   * so only at its next heartbeat, and the run must not look finished meanwhile. A run with nothing
   * accepted yet waits the same: with a shared seen-set, a scheduler that starts a run after a peer
   * accepted its seeds accepts none of them, and until that peer's heartbeat tells it otherwise
   * the run would look finished without a page (and be marked failed: "accepted none of its
   * seeds").
   */
  private holdOffEmpty(perRun: Map<string, FrontierStats>): void {
    const now = Date.now();
    const quietMs = this.opts.shardHeartbeatMs * 3;
    for (const [runId, stats] of perRun) {
      const cancelled = this.ledger.stateOf(runId) === 'cancelled';
      if (stats.ready + stats.delayed + stats.leased > 0 || cancelled) {
        this.emptySince.delete(runId);
        continue;
      }
      const since = this.emptySince.get(runId) ?? now;
      this.emptySince.set(runId, since);
      if (now - since < quietMs) perRun.set(runId, { ...stats, ready: 1 });
    }
  }

  /** A cancelled run: no consumers, no queues (their messages go with them). */
  private async purgeRun(link: Link, runId: string): Promise<void> {
    await this.stopConsuming(link, runId);
    try {
      for (const queue of runQueueNames(this.queues, runId)) await link.channel.deleteQueue(queue);
    } catch (err) {
      throw unavailable('cancel', err);
    }
    this.linkRunsOf(link).declared.delete(runId);
    this.ledger.markPurged(runId);
    await this.sharedSeen?.forget(runId);
  }

  /** A retired cancelled run: its pending tasks are cancelled, but for its leases still out. */
  private cancelledStats(run: LedgerRun): FrontierStats {
    const stats = runStats([run], {
      queued: new Map(),
      waiting: 0,
      bufferedOf: () => 0,
      leasedOf: (id) => this.book.leasedOf(id),
    }).get(run.runId);
    const { total, done, failed } = run;
    return stats ?? { ready: 0, delayed: 0, leased: 0, done, failed, total, cancelled: 0 };
  }

  /** A retired run's queues: a cancelled run's go with what they hold, another's only when idle. */
  private async deleteRetired(link: Link, run: LedgerRun): Promise<void> {
    if (run.state !== 'cancelled') return this.deleteIfIdle(link, run.runId);
    await this.purgeRun(link, run.runId);
    this.sweeper.add(run.runId);
  }

  /**
   * A retired run's queues, deleted when every one is empty and consumed by no one. A queue still
   * consumed (by another scheduler that has not retired the run yet) or holding messages keeps the
   * whole set; the next connect tries again.
   */
  private async deleteIfIdle(link: Link, runId: string): Promise<void> {
    const queues = runQueueNames(this.queues, runId);
    const { deleted, busy } = await deleteQueuesIfIdle(link, queues, 'retire');
    if (!deleted) {
      this.log.info({ runId, busy }, "a finished run's queues are kept: not empty, or still consumed");
      return;
    }
    this.ledger.markPurged(runId);
    this.sweeper.add(runId);
    await this.sharedSeen?.forget(runId);
    this.log.info({ runId, queues: queues.length }, "a finished run's queues are deleted");
  }

  private onLinkDown(link: Link): void {
    const dropped = this.book.dropLink(link);
    if (this.membership !== null) {
      // Its consumers and its heartbeat queue went with the connection: the broker gave its
      // deliveries back, and the others will take its shards once their sweep sees the queue gone.
      this.membership.detach();
      this.owned.clear();
      this.draining.clear();
    }
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
    for (const d of [...expired, ...tooOld]) this.handBack(d);
    if (expired.length > 0) {
      // A lease runs out when its holder neither settled nor renewed it in time: the task goes out
      // again, so an operator (and a test counting refetches) should see when and how many.
      this.log.warn(
        { leases: expired.length },
        'handing back leases that ran out; their tasks will be fetched again',
      );
    }
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

  /** Back to its queue, attempt unchanged; a cancelled run's task is dropped instead. */
  private handBack(delivery: Delivery): void {
    if (this.ledger.stateOf(delivery.task.runId) === 'cancelled') ackOn(delivery.link, delivery.message);
    else requeueOn(delivery.link, delivery.message);
  }

  private pausedRuns(): Set<string> {
    const paused = new Set<string>();
    for (const run of this.ledger.runs()) if (run.state !== 'active') paused.add(run.runId);
    return paused;
  }

  /** The window lease() fills: the prefetch of each level queue of each active run. */
  private windowSize(): number {
    const active = this.ledger.runs().filter((r) => r.state === 'active').length;
    return this.opts.prefetch * PRIORITY_LEVELS * Math.max(1, active) * Math.max(1, this.owned.size);
  }

  private linkRunsOf(link: Link): LinkRuns {
    let runs = this.linkRuns.get(link);
    if (runs === undefined) this.linkRuns.set(link, (runs = { declared: new Map(), consuming: new Map() }));
    return runs;
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
