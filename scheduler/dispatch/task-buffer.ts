import type { Lease } from '../../shared/protocol/task.js';

/** When the next task of a host may start: the host gate, or the gate combined with robots.txt. */
export interface HostWait {
  waitMs(host: string, now: number, next: Lease): number;
  /**
   * Changes when the politeness settings change (a wait may then be shorter than the one a buffer
   * remembers; see TaskBuffer.take). Absent: the waits never change but with time.
   */
  readonly generation?: number;
}

/**
 * Leased tasks waiting for a crawler, queued per host so a host that must wait (politeness) never
 * holds back the others. Hosts are served round-robin.
 */
export class TaskBuffer {
  private readonly byHost = new Map<string, Lease[]>();
  private hosts: string[] = [];
  private cursor = 0;
  private count = 0;
  /**
   * Per host, the time before which its next task may not start, from the last look at a host
   * that had to wait a finite time (a delay between starts, a cool-down, a robots.txt retry).
   * A later look at that host before then is skipped: with many hosts, most of them waiting, the
   * scan of every host at every pump was most of the dispatcher's time. A host waiting for a
   * request to finish (Infinity) is looked at every time, as before.
   */
  private readonly notBefore = new Map<string, number>();
  private generation: number | undefined = undefined;

  constructor(private readonly perHostLimit: number | (() => number)) {}

  get size(): number {
    return this.count;
  }

  add(lease: Lease): void {
    let queue = this.byHost.get(lease.host);
    if (!queue) {
      queue = [];
      this.byHost.set(lease.host, queue);
      this.hosts.push(lease.host);
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
   * The next task whose host may start now, or null; `wakeInMs` tells when to look again
   * (Infinity when every waiting host waits for a request to finish). With `accept`, a host whose
   * next task it refuses is passed over (a static crawler skips hosts waiting for a renderer).
   */
  take(
    gate: HostWait,
    now: number,
    accept?: (lease: Lease) => boolean,
  ): { lease: Lease | null; wakeInMs: number } {
    let wakeInMs = Infinity;
    if (gate.generation !== this.generation) {
      this.notBefore.clear();
      this.generation = gate.generation;
    }
    const n = this.hosts.length;
    for (let i = 0; i < n; i++) {
      const index = (this.cursor + i) % n;
      const host = this.hosts[index] as string;
      const queue = this.byHost.get(host) as Lease[];
      if (accept && !accept(queue[0] as Lease)) continue;
      const due = this.notBefore.get(host);
      if (due !== undefined && due > now) {
        wakeInMs = Math.min(wakeInMs, due - now);
        continue;
      }
      const wait = gate.waitMs(host, now, queue[0] as Lease);
      if (wait > 0) {
        if (wait !== Infinity) this.notBefore.set(host, now + wait);
        wakeInMs = Math.min(wakeInMs, wait);
        continue;
      }
      const lease = queue.shift() as Lease;
      this.count -= 1;
      this.notBefore.delete(host);
      if (queue.length === 0) {
        this.byHost.delete(host);
        this.hosts.splice(index, 1);
        this.cursor = n - 1 === 0 ? 0 : index % (n - 1);
      } else {
        this.cursor = (index + 1) % n;
      }
      return { lease, wakeInMs: 0 };
    }
    return { lease: null, wakeInMs };
  }

  /**
   * Something about `host` changed that may let its next task start sooner than remembered (one of
   * its requests ended: a slot is free, the adaptive delay learned): look at it again.
   */
  recheck(host: string): void {
    this.notBefore.delete(host);
  }

  /** Removes and returns the buffered tasks `test` accepts (a paused run's, to hand them back). */
  removeWhere(test: (lease: Lease) => boolean): Lease[] {
    const removed: Lease[] = [];
    for (const [host, queue] of this.byHost) {
      const kept = queue.filter((lease) => !test(lease));
      if (kept.length === queue.length) continue;
      removed.push(...queue.filter(test));
      if (kept.length > 0) this.byHost.set(host, kept);
      else {
        this.byHost.delete(host);
        this.notBefore.delete(host);
      }
    }
    if (removed.length > 0) {
      this.hosts = this.hosts.filter((host) => this.byHost.has(host));
      this.cursor = this.hosts.length === 0 ? 0 : this.cursor % this.hosts.length;
      this.count -= removed.length;
    }
    return removed;
  }

  /** Every buffered task, removing them (on shutdown, to hand them back). */
  drain(): Lease[] {
    const all = [...this.byHost.values()].flat();
    this.byHost.clear();
    this.notBefore.clear();
    this.hosts = [];
    this.cursor = 0;
    this.count = 0;
    return all;
  }

  all(): Lease[] {
    return [...this.byHost.values()].flat();
  }
}
