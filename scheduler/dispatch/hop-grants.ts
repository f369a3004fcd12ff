import type { HostGate } from '../politeness/host-gate.js';
import type { InFlight } from './flight-book.js';

export interface HopGrantsDeps {
  gate: Pick<HostGate, 'holdForHop' | 'hopWaitMs' | 'grantHop' | 'dropHop'>;
  clock: () => number;
  /** The task's flight, while it is in flight on that session. */
  flightOf(sessionId: string, taskId: string): InFlight | null;
  /** Tells the crawler its hop may go (`hop-granted`). */
  grant(sessionId: string, taskId: string): void;
  /** A hop was dropped (its task ended): the host's new tasks, held behind it, may go. */
  dropped(host: string): void;
  /** Calls `serve` again in `ms` (the dispatcher's wake: its pump serves hops first). */
  wakeIn(ms: number): void;
}

interface WaitingHop {
  sessionId: string;
  taskId: string;
  host: string;
  flight: InFlight;
}

/**
 * Redirects back to a task's host, granted as the host's requests are started: a crawler follows
 * redirects inside a task, and one that leads back to the task's host asks (`hop`) before it sends
 * the next request. The hop waits for the host's delay after its last start, whichever task made
 * it, and goes before any new task of the host (the gate holds those while a hop waits). Once
 * granted it is a start like a task's: the crawler reports its write with `started`, and the host's
 * next request waits for that report. A hop whose task ended meanwhile is dropped.
 */
export class HopGrants {
  private readonly waiting: WaitingHop[] = [];

  constructor(private readonly deps: HopGrantsDeps) {}

  get size(): number {
    return this.waiting.length;
  }

  /** The crawler asks to send the hop of a task in flight on its session; unknown tasks are ignored. */
  ask(sessionId: string, taskId: string): void {
    const flight = this.deps.flightOf(sessionId, taskId);
    if (!flight || this.waiting.some((h) => h.flight === flight)) return;
    const { host } = flight.lease;
    this.deps.gate.holdForHop(host);
    this.waiting.push({ sessionId, taskId, host, flight });
    this.serve();
  }

  /** Grants every hop whose host allows it now; the others are looked at again when due. */
  serve(): void {
    if (this.waiting.length === 0) return;
    const now = this.deps.clock();
    let soonest = Infinity;
    for (let i = 0; i < this.waiting.length;) {
      const hop = this.waiting[i] as WaitingHop;
      if (this.deps.flightOf(hop.sessionId, hop.taskId) !== hop.flight) {
        this.waiting.splice(i, 1);
        this.deps.gate.dropHop(hop.host);
        this.deps.dropped(hop.host);
        continue;
      }
      const wait = this.deps.gate.hopWaitMs(hop.host, now);
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      this.deps.gate.grantHop(hop.host, now);
      hop.flight.startPending = true;
      this.deps.grant(hop.sessionId, hop.taskId);
    }
    if (Number.isFinite(soonest)) this.deps.wakeIn(soonest);
  }

  /** Forgets every waiting hop (the dispatcher closes). */
  close(): void {
    this.waiting.length = 0;
  }
}
