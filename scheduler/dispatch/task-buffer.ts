import FlatQueue from 'flatqueue';
import type { Lease } from '../../shared/protocol/task.js';

/** When the next task of a host may start: its politeness, and what else holds it back. */
export interface HostWait {
  /**
   * The host's politeness: 0, ms to wait, or Infinity while it waits for one of its requests to
   * end or to report its start; the buffer then looks at the host again only once told to
   * (TaskBuffer.recheck).
   */
  waitMs(host: string, now: number): number;
  /** What else holds `next` back (robots.txt): 0, ms, or Infinity until the next look. */
  holdMs?(next: Lease, now: number): number;
  /**
   * Changes when the politeness settings change: every wait the buffer remembers is then looked at
   * again (it may be shorter now). Absent: waits change only with time and rechecks.
   */
  readonly generation?: number;
}

/**
 * Waits remembered for a host that waits for an event (a request ending) are looked at again this
 * often all the same: should an event ever go unreported, the host is late by this much at most.
 */
const PARKED_LOOK_MS = 1_000;

/**
 * Leased tasks waiting for a crawler, queued per host so a host that must wait (politeness) never
 * holds back the others. Hosts whose next task may go are served round-robin.
 *
 * A take looks only at the hosts that may be ready: a host told to wait a known time sleeps in a
 * queue ordered by when it is due, and one that waits for a request to end sleeps until the
 * dispatcher says something changed for it (`recheck`). With thousands of hosts, most of them
 * waiting, looking at every host at every pump was what the dispatcher spent its time on.
 */
export class TaskBuffer {
  private readonly byHost = new Map<string, Lease[]>();
  /**
   * Hosts to look at, in round-robin order: new ones, due ones, rechecked ones. A host that goes to
   * sleep leaves a hole (null), so that a look at thousands of hosts stays linear; holes are
   * squeezed out once they are most of the array.
   */
  private ready: (string | null)[] = [];
  private holes = 0;
  private cursor = 0;
  /** Hosts sleeping until a known time (the queue may hold older times for them: those are skipped). */
  private readonly dueAt = new Map<string, number>();
  private readonly due = new FlatQueue<string>();
  /** Hosts sleeping until `recheck` (or the next periodic look). */
  private readonly parked = new Set<string>();
  private lastParkedLook = -Infinity;
  private generation: number | undefined = undefined;
  private count = 0;

  constructor(private readonly perHostLimit: number | (() => number)) {}

  get size(): number {
    return this.count;
  }

  add(lease: Lease): void {
    let queue = this.byHost.get(lease.host);
    if (!queue) {
      queue = [];
      this.byHost.set(lease.host, queue);
      this.ready.push(lease.host);
    }
    queue.push(lease);
    this.count += 1;
  }

  /** Hosts whose next task `test` accepts, with how many tasks they hold (a scan of the hosts). */
  hostsWhoseNext(test: (lease: Lease) => boolean): { hosts: string[]; tasks: number } {
    const hosts: string[] = [];
    let tasks = 0;
    for (const [host, queue] of this.byHost) {
      const next = queue[0];
      if (next !== undefined && test(next)) {
        hosts.push(host);
        tasks += queue.length;
      }
    }
    return { hosts, tasks };
  }

  /** The next task of `host`, left in place. */
  peek(host: string): Lease | undefined {
    return this.byHost.get(host)?.[0];
  }

  /** Tasks buffered for `host`. */
  countOf(host: string): number {
    return this.byHost.get(host)?.length ?? 0;
  }

  /** Hosts holding as many buffered tasks as they may: the frontier should not lease more of them. */
  fullHosts(): string[] {
    const full: string[] = [];
    const limit = typeof this.perHostLimit === 'function' ? this.perHostLimit() : this.perHostLimit;
    for (const [host, queue] of this.byHost) if (queue.length >= limit) full.push(host);
    return full;
  }

  /**
   * Something about `host` changed that may let its next task start sooner than the buffer
   * remembers (one of its requests ended or reported its start): look at it again.
   */
  recheck(host: string): void {
    if (this.parked.delete(host) || this.dueAt.delete(host)) this.ready.push(host);
  }

  /** Look at every host again (the robots.txt rules of some host changed, say). */
  recheckAll(): void {
    for (const host of this.parked) this.ready.push(host);
    for (const host of this.dueAt.keys()) this.ready.push(host);
    this.parked.clear();
    this.dueAt.clear();
    this.due.clear();
  }

  /**
   * The next task whose host may start now, or null; `wakeInMs` tells when to look again
   * (Infinity when every waiting host waits for a request to finish). With `accept`, a host whose
   * next task it refuses is passed over (a static crawler skips hosts waiting for a renderer).
   */
  take(
    gate: HostWait,
    now: number,
    accept?: (lease: Lease) => boolean,
  ): { lease: Lease | null; wakeInMs: number } {
    this.wakeDue(gate, now);
    this.squeeze();
    let wakeInMs = Infinity;
    const n = this.ready.length;
    let index = n === 0 ? 0 : this.cursor % n;
    for (let looked = 0; looked < n; looked++, index = index + 1 === n ? 0 : index + 1) {
      const host = this.ready[index];
      if (host === null || host === undefined) continue;
      const queue = this.byHost.get(host) as Lease[];
      const next = queue[0] as Lease;
      if (accept && !accept(next)) continue;
      const politeness = gate.waitMs(host, now);
      if (politeness === Infinity) {
        this.leave(index);
        this.parked.add(host);
        continue;
      }
      const wait = gate.holdMs ? Math.max(politeness, gate.holdMs(next, now)) : politeness;
      if (wait === Infinity) continue; // held until the next look (robots.txt being read)
      if (wait > 0) {
        this.leave(index);
        this.dueAt.set(host, now + wait);
        this.due.push(host, now + wait);
        wakeInMs = Math.min(wakeInMs, wait);
        continue;
      }
      queue.shift();
      this.count -= 1;
      if (queue.length === 0) {
        this.byHost.delete(host);
        this.leave(index);
      }
      this.cursor = index + 1;
      return { lease: next, wakeInMs: 0 };
    }
    this.cursor = index;
    const soonest = this.soonestDue();
    if (soonest !== undefined) wakeInMs = Math.min(wakeInMs, Math.max(1, soonest - now));
    return { lease: null, wakeInMs };
  }

  /** Removes and returns the buffered tasks `test` accepts (a paused run's, to hand them back). */
  removeWhere(test: (lease: Lease) => boolean): Lease[] {
    const removed: Lease[] = [];
    for (const [host, queue] of this.byHost) {
      const kept = queue.filter((lease) => !test(lease));
      if (kept.length === queue.length) continue;
      removed.push(...queue.filter(test));
      if (kept.length > 0) this.byHost.set(host, kept);
      else this.forget(host);
    }
    if (removed.length > 0) {
      this.ready = this.ready.filter((host) => host !== null && this.byHost.has(host));
      this.holes = 0;
      this.cursor = 0;
      this.count -= removed.length;
    }
    return removed;
  }

  /** Every buffered task, removing them (on shutdown, to hand them back). */
  drain(): Lease[] {
    const all = [...this.byHost.values()].flat();
    this.byHost.clear();
    this.ready = [];
    this.holes = 0;
    this.cursor = 0;
    this.parked.clear();
    this.dueAt.clear();
    this.due.clear();
    this.count = 0;
    return all;
  }

  all(): Lease[] {
    return [...this.byHost.values()].flat();
  }

  /** Hosts whose time came, back into the round; all of them when the settings changed. */
  private wakeDue(gate: HostWait, now: number): void {
    if (gate.generation !== this.generation) {
      this.generation = gate.generation;
      this.recheckAll();
    } else if (now - this.lastParkedLook >= PARKED_LOOK_MS) {
      for (const host of this.parked) this.ready.push(host);
      this.parked.clear();
    }
    if (this.parked.size === 0) this.lastParkedLook = now;
    for (let at = this.due.peekValue(); at !== undefined && at <= now; at = this.due.peekValue()) {
      const host = this.due.pop() as string;
      if (this.dueAt.get(host) !== at) continue; // an older time of a host since woken
      this.dueAt.delete(host);
      this.ready.push(host);
    }
  }

  /** When the first sleeping host is due (skipping stale times). */
  private soonestDue(): number | undefined {
    for (let at = this.due.peekValue(); at !== undefined; at = this.due.peekValue()) {
      const host = this.due.peek() as string;
      if (this.dueAt.get(host) === at) return at;
      this.due.pop();
    }
    return undefined;
  }

  /** The host at `index` leaves the round (asleep, or out of tasks). */
  private leave(index: number): void {
    this.ready[index] = null;
    this.holes += 1;
  }

  /** Squeezes the holes out of the round once they are most of it, keeping the cursor's place. */
  private squeeze(): void {
    if (this.holes < 64 || this.holes * 2 < this.ready.length) return;
    let cursor = 0;
    const live: string[] = [];
    this.ready.forEach((host, i) => {
      if (host === null) return;
      if (i < this.cursor) cursor += 1;
      live.push(host);
    });
    this.ready = live;
    this.holes = 0;
    this.cursor = cursor;
  }

  private forget(host: string): void {
    this.byHost.delete(host);
    this.parked.delete(host);
    this.dueAt.delete(host); // its time in the queue is skipped
  }
}
