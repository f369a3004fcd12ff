import type { ConsumeMessage } from 'amqplib';
import { PRIORITY_LEVELS } from '../../../protocol/task-priority.js';
import type { Lease } from '../../../protocol/task.js';
import { pickByLevel, type LevelPicker } from '../level-picker.js';
import type { Link } from './broker-link.js';
import type { TaskMessage } from './task-message.js';

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

/** A message the broker delivered to this process and that is not acked yet. */
export interface Delivery {
  link: Link;
  message: ConsumeMessage;
  task: TaskMessage;
  taskId: string;
  /** Its priority level, 0..PRIORITY_LEVELS - 1 (the level queue it came from). */
  priority: number;
  /** Arrival order, for "oldest first" within a priority. */
  seq: number;
  /** Date.now() at arrival: the broker's consumer timeout runs on real time, whatever the clock. */
  receivedAtMs: number;
}

export interface Held extends Delivery {
  leaseId: string;
  /** On the frontier's clock. */
  expiresAt: number;
}

const LEVELS = PRIORITY_LEVELS;

/** A task's key in the book: the same URL in two runs is two tasks. */
const keyOf = (task: { runId: string; url: string }): string => `${task.runId}\n${task.url}`;

/**
 * The deliveries this process holds, in three places: buffered (delivered, not leased), leased
 * (handed to the scheduler, expiring on the frontier's clock) and settling (claimed by a settle
 * that is publishing). Every entry names its link, so entries of a dead link are dropped together
 * and never acked. Memory is bounded by the channel's prefetch.
 */
export class LeaseBook {
  /** Buffered deliveries, one FIFO per priority level. */
  private readonly levels: Delivery[][] = Array.from({ length: LEVELS }, () => []);
  private bufferedCount = 0;
  private readonly leases = new Map<string, Held>();
  private readonly settling = new Set<Held>();
  /** Buffered deliveries being set aside (republished with a delay, then acked). */
  private readonly parking = new Set<Delivery>();
  /** Run and URL → highest attempt held, over all three places: spots a second copy of a message. */
  private readonly urls = new Map<string, { attempt: number; copies: number }>();
  private seq = 0;
  /**
   * Lower bounds of the leases' expiry and of every held delivery's arrival: takeOverdue, called
   * on every lease and stats, scans the book only once one of them says something may be due.
   * Set as entries come in, recomputed exactly by each scan; an entry leaving keeps them valid.
   */
  private earliestExpiry = Number.POSITIVE_INFINITY;
  private earliestArrival = Number.POSITIVE_INFINITY;

  /** `token` is random per open, so lease ids never repeat across restarts. */
  constructor(private readonly token: string) {}

  get buffered(): number {
    return this.bufferedCount;
  }

  /** Leased or being settled: out of the scheduler's reach but not finished. */
  get leased(): number {
    return this.leases.size + this.settling.size;
  }

  /** Unacked deliveries held here, against the prefetch window. */
  get held(): number {
    return this.bufferedCount + this.leased + this.parking.size;
  }

  /** Deliveries being set aside right now. */
  get parked(): number {
    return this.parking.size;
  }

  /**
   * Takes out the buffered deliveries of `link` for which `delayOf` gives a delay, to be set aside
   * for that long; they stay counted against the window until finishParking or unpark.
   */
  takeToPark(
    link: Link,
    delayOf: (delivery: Delivery) => number | null,
  ): { delivery: Delivery; delayMs: number }[] {
    const taken: { delivery: Delivery; delayMs: number }[] = [];
    for (let p = 0; p < LEVELS; p++) {
      const level = this.levels[p];
      if (level === undefined || level.length === 0) continue;
      this.levels[p] = level.filter((delivery) => {
        const delayMs = delivery.link === link ? delayOf(delivery) : null;
        if (delayMs === null) return true;
        taken.push({ delivery, delayMs });
        this.parking.add(delivery);
        return false;
      });
    }
    this.bufferedCount -= taken.length;
    return taken;
  }

  /** A copy of a run's `url` held here, leased or buffered, if any (a linear scan: for diagnostics only). */
  find(runId: string, url: string): { delivery: Delivery; leased: boolean } | undefined {
    const is = (d: Delivery): boolean => d.task.url === url && d.task.runId === runId;
    for (const held of this.leases.values()) if (is(held)) return { delivery: held, leased: true };
    for (const held of this.settling) if (is(held)) return { delivery: held, leased: true };
    for (const level of this.levels) {
      const delivery = level.find(is);
      if (delivery) return { delivery, leased: false };
    }
    return undefined;
  }

  /** Buffered deliveries of a run (a linear scan over the window). */
  bufferedOf(runId: string): number {
    let n = 0;
    for (const level of this.levels) for (const d of level) if (d.task.runId === runId) n += 1;
    return n;
  }

  /** Leased or settling deliveries of a run. */
  leasedOf(runId: string): number {
    let n = 0;
    for (const held of this.leases.values()) if (held.task.runId === runId) n += 1;
    for (const held of this.settling) if (held.task.runId === runId) n += 1;
    return n;
  }

  /** Takes out every buffered delivery of a run (paused or cancelled), to be handed back. */
  takeRun(runId: string): Delivery[] {
    return this.takeWhere((d) => d.task.runId === runId);
  }

  /** Takes out every buffered delivery `which` picks (of a shard given up, say), to be handed back. */
  takeWhere(which: (delivery: Delivery) => boolean): Delivery[] {
    const taken: Delivery[] = [];
    for (let p = 0; p < LEVELS; p++) {
      const level = this.levels[p] ?? [];
      this.levels[p] = level.filter((d) => !which(d) || (taken.push(d), false));
    }
    this.bufferedCount -= taken.length;
    for (const d of taken) this.forget(d);
    return taken;
  }

  /** Deliveries `which` picks that are out of the buffer and not finished: leased, being settled or set aside. */
  outWhere(which: (delivery: Delivery) => boolean): number {
    let n = 0;
    for (const held of this.leases.values()) if (which(held)) n += 1;
    for (const held of this.settling) if (which(held)) n += 1;
    for (const delivery of this.parking) if (which(delivery)) n += 1;
    return n;
  }

  /** Every delivery held here (buffered or out), counted per run. */
  heldPerRun(): Record<string, number> {
    const per: Record<string, number> = {};
    const count = (d: Delivery): void => {
      per[d.task.runId] = (per[d.task.runId] ?? 0) + 1;
    };
    for (const level of this.levels) level.forEach(count);
    this.leases.forEach(count);
    this.settling.forEach(count);
    this.parking.forEach(count);
    return per;
  }

  /** A set-aside copy is confirmed and the delivery acked: it leaves the book. */
  finishParking(delivery: Delivery): void {
    if (this.parking.delete(delivery)) this.forget(delivery);
  }

  /** Setting aside failed: the delivery is buffered again if its link lives. */
  unpark(delivery: Delivery): void {
    if (!this.parking.delete(delivery)) return;
    if (!delivery.link.alive) {
      this.forget(delivery);
      return;
    }
    const level = this.levels[delivery.priority] ?? this.levels[0];
    level?.push(delivery);
    level?.sort((a, b) => a.seq - b.seq);
    this.bufferedCount += 1;
    this.earliestArrival = Math.min(this.earliestArrival, delivery.receivedAtMs);
  }

  /** True when a copy of this task, at this attempt or a later one, is already held here. */
  holds(task: { runId: string; url: string }, attempt: number): boolean {
    const entry = this.urls.get(keyOf(task));
    return entry !== undefined && entry.attempt >= attempt;
  }

  add(delivery: Omit<Delivery, 'seq'>): void {
    const level = this.levels[delivery.priority] ?? this.levels[0];
    level?.push({ ...delivery, seq: (this.seq += 1) });
    this.bufferedCount += 1;
    this.earliestArrival = Math.min(this.earliestArrival, delivery.receivedAtMs);
    const entry = this.urls.get(keyOf(delivery.task));
    if (entry === undefined)
      this.urls.set(keyOf(delivery.task), { attempt: delivery.task.attempt, copies: 1 });
    else {
      entry.attempt = Math.max(entry.attempt, delivery.task.attempt);
      entry.copies += 1;
    }
  }

  /**
   * Up to `max` buffered deliveries of `link`, levels in the picker's order (higher first, none
   * starved), oldest first within a level; leased until `expiresAt`. Deliveries of an excluded host
   * or of a run in `skipRuns` (paused) stay buffered.
   */
  take(
    max: number,
    excludeHosts: ReadonlySet<string>,
    skipRuns: ReadonlySet<string>,
    link: Link,
    expiresAt: number,
    picker: LevelPicker,
  ): Held[] {
    const eligible = (d: Delivery): boolean =>
      d.link === link && !excludeHosts.has(d.task.host) && !skipRuns.has(d.task.runId);
    const candidates = this.levels.map((level) => {
      const found: Delivery[] = [];
      for (const d of level) {
        if (found.length >= max) break;
        if (eligible(d)) found.push(d);
      }
      return found;
    });
    const order = pickByLevel(picker, candidates, max);
    if (order.length === 0) return [];
    const picked = new Set(order);
    const taken: Held[] = [];
    for (let p = 0; p < LEVELS; p++) {
      const level = this.levels[p] ?? [];
      if (!level.some((d) => picked.has(d))) continue;
      this.levels[p] = level.filter((d) => !picked.has(d));
    }
    // In the picker's order, which is the order the caller gets them in.
    for (const delivery of order) {
      const leaseId = `${this.token}.${link.generation}.${delivery.message.fields.deliveryTag}`;
      const held: Held = { ...delivery, leaseId, expiresAt };
      this.leases.set(leaseId, held);
      taken.push(held);
    }
    this.bufferedCount -= taken.length;
    if (taken.length > 0) this.earliestExpiry = Math.min(this.earliestExpiry, expiresAt);
    return taken;
  }

  /** Takes a live lease out for settling; undefined when stale (unknown, expired and reclaimed, settled). */
  claim(ref: LeaseRef): Held | undefined {
    const held = this.lookup(ref);
    if (held === undefined) return undefined;
    this.leases.delete(held.leaseId);
    this.settling.add(held);
    return held;
  }

  /** True while `ref` is leased here on a live link: false means its message comes back by itself. */
  isLive(ref: LeaseRef): boolean {
    return this.lookup(ref) !== undefined;
  }

  /** A settle failed: the lease is live again if its link still is. */
  unclaim(held: Held): void {
    if (!this.settling.delete(held)) return;
    if (!held.link.alive) {
      this.forget(held);
      return;
    }
    this.leases.set(held.leaseId, held);
    // A scan while it was settling did not see it.
    this.earliestExpiry = Math.min(this.earliestExpiry, held.expiresAt);
    this.earliestArrival = Math.min(this.earliestArrival, held.receivedAtMs);
  }

  /** A settle finished with this lease (acked, or its link died). */
  finish(held: Held): void {
    if (this.settling.delete(held)) this.forget(held);
  }

  /** Takes a live lease out to be handed back. */
  release(ref: LeaseRef): Held | undefined {
    const held = this.lookup(ref);
    if (held !== undefined) {
      this.leases.delete(held.leaseId);
      this.forget(held);
    }
    return held;
  }

  /** Extends a live lease to `until`, never shortening it. False when stale. */
  renew(ref: LeaseRef, until: number): boolean {
    const held = this.lookup(ref);
    if (held === undefined) return false;
    held.expiresAt = Math.max(held.expiresAt, until);
    return true;
  }

  /**
   * Takes out leases expired on the frontier's clock, and any delivery (leased or buffered) held
   * since before `receivedBeforeMs`, so it goes back before the broker's consumer timeout.
   */
  takeOverdue(now: number, receivedBeforeMs: number): { expired: Held[]; tooOld: Delivery[] } {
    const expired: Held[] = [];
    const tooOld: Delivery[] = [];
    if (now < this.earliestExpiry && receivedBeforeMs <= this.earliestArrival) return { expired, tooOld };
    for (const held of this.leases.values()) {
      if (held.expiresAt <= now) expired.push(held);
      else if (held.receivedAtMs < receivedBeforeMs) tooOld.push(held);
    }
    for (const held of [...expired, ...tooOld] as Held[]) this.leases.delete(held.leaseId);
    for (let p = 0; p < LEVELS; p++) {
      const level = this.levels[p];
      if (level === undefined || !level.some((d) => d.receivedAtMs < receivedBeforeMs)) continue;
      this.levels[p] = level.filter((d) => {
        if (d.receivedAtMs >= receivedBeforeMs) return true;
        tooOld.push(d);
        this.bufferedCount -= 1;
        return false;
      });
    }
    for (const d of [...expired, ...tooOld]) this.forget(d);
    this.earliestExpiry = Number.POSITIVE_INFINITY;
    this.earliestArrival = Number.POSITIVE_INFINITY;
    for (const held of this.leases.values()) {
      this.earliestExpiry = Math.min(this.earliestExpiry, held.expiresAt);
      this.earliestArrival = Math.min(this.earliestArrival, held.receivedAtMs);
    }
    for (const level of this.levels)
      for (const d of level) this.earliestArrival = Math.min(this.earliestArrival, d.receivedAtMs);
    return { expired, tooOld };
  }

  /** Forgets everything of a dead link: the broker has already put those messages back. */
  dropLink(link: Link): number {
    const dropped: Delivery[] = [];
    for (let p = 0; p < LEVELS; p++) {
      const level = this.levels[p] ?? [];
      const kept = level.filter((d) => d.link !== link || (dropped.push(d), false));
      this.bufferedCount -= level.length - kept.length;
      this.levels[p] = kept;
    }
    for (const [leaseId, held] of this.leases) {
      if (held.link !== link) continue;
      this.leases.delete(leaseId);
      dropped.push(held);
    }
    for (const held of this.settling) {
      if (held.link !== link) continue;
      this.settling.delete(held);
      dropped.push(held);
    }
    for (const delivery of this.parking) {
      if (delivery.link !== link) continue;
      this.parking.delete(delivery);
      dropped.push(delivery);
    }
    for (const d of dropped) this.forget(d);
    return dropped.length;
  }

  /** Empties the buffer and the leases (at close), returning what was held. */
  drain(): Delivery[] {
    const all: Delivery[] = [...this.levels.flat(), ...this.leases.values()];
    for (let p = 0; p < LEVELS; p++) this.levels[p] = [];
    this.bufferedCount = 0;
    this.leases.clear();
    for (const d of all) this.forget(d);
    return all;
  }

  /** A delivery left the book for good. */
  private forget(delivery: Delivery): void {
    const key = keyOf(delivery.task);
    const entry = this.urls.get(key);
    if (entry === undefined) return;
    entry.copies -= 1;
    if (entry.copies <= 0) this.urls.delete(key);
  }

  private lookup(ref: LeaseRef): Held | undefined {
    if (typeof ref?.leaseId !== 'string') return undefined;
    const held = this.leases.get(ref.leaseId);
    return held !== undefined && held.taskId === ref.taskId && held.link.alive ? held : undefined;
  }
}

export function toLease(held: Held): Lease {
  const { task } = held;
  return {
    runId: task.runId,
    url: task.url,
    host: task.host,
    depth: task.depth,
    priority: task.priority,
    parentUrl: task.parentUrl,
    taskId: held.taskId,
    leaseId: held.leaseId,
    attempt: task.attempt,
    lastError: task.lastError,
    // Spreads last: on Node 20 a property written after a spread goes through V8's runtime.
    ...(task.kind === 'sitemap' ? { kind: task.kind } : {}),
    ...(task.lastmod === undefined ? {} : { lastmod: task.lastmod }),
  };
}
