import type { HostGate } from '../politeness/host-gate.js';
import type { InFlight } from './flight-book.js';

export interface HopGrantsDeps {
  gate: Pick<HostGate, 'holdForHop' | 'hopWaitMs' | 'grantHop' | 'dropHop'>;
  clock: () => number;
  /** The task's flight, while it is in flight on that session. */
  flightOf(sessionId: string, taskId: string): InFlight | null;
  /** Tells the crawler its hop may go (`hop-granted`). */
  grant(sessionId: string, taskId: string): void;
  /** Tells the crawler its hop may not go (`hop-denied`): robots.txt disallows its target. */
  deny(sessionId: string, taskId: string): void;
  /** Whether a hop of the lease's task to `url` may go, as far as robots.txt says; absent: all may. */
  allows?(lease: InFlight['lease'], url: string): boolean;
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
 * Redirects back to a task's host, checked against its robots.txt and granted as the host's
 * requests are started: a crawler follows redirects inside a task, and one that leads back to the
 * task's host asks (`hop`, with its target) before it sends the next request. A target robots.txt
 * disallows is denied at once, and an unpaced host's hop granted at once. A paced host's hop waits
 * for the host's delay after its last start, whichever task made it, and goes before any new task
 * of the host (the gate holds those while a hop waits). Once granted it is a start like a task's:
 * the crawler reports its write with `started`, and the host's next request waits for that report.
 * A hop whose task ended meanwhile is dropped.
 */
export class HopGrants {
  private readonly waiting: WaitingHop[] = [];

  constructor(private readonly deps: HopGrantsDeps) {}

  get size(): number {
    return this.waiting.length;
  }

  /**
   * The crawler asks to send the hop of a task in flight on its session, to `url` (absent from a
   * crawler that predates it); unknown tasks are ignored. A target robots.txt disallows is denied
   * at once; an unpaced host's hop is granted at once; a paced host's waits for its delay.
   */
  ask(sessionId: string, taskId: string, url?: string): void {
    const flight = this.deps.flightOf(sessionId, taskId);
    if (!flight || this.waiting.some((h) => h.flight === flight)) return;
    const { host } = flight.lease;
    if (url !== undefined && this.deps.allows?.(flight.lease, url) === false) {
      this.deps.deny(sessionId, taskId);
      return;
    }
    if (!flight.paced) {
      this.deps.grant(sessionId, taskId);
      return;
    }
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
