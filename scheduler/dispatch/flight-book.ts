import type { Lease } from '../../shared/protocol/task.js';
import type { HostGate, RequestFeedback } from '../politeness/host-gate.js';

export interface InFlight {
  lease: Lease;
  sessionId: string;
  sentAt: number;
  /** The crawler must report when the request goes out (`started`), and has not yet. */
  startPending: boolean;
  /** Its host has a delay: the task was sent with `reportStart`, and its hops wait for the gate. */
  paced: boolean;
  /** The crawler said it works on the task (`working`): it was not just queued there. */
  working: boolean;
  /** A suspect (see CrashPolicy in dispatcher.ts): at most one such task per crawler at a time. */
  suspect: boolean;
  /** The capture id the task was sent with (its record's), when known. */
  captureId?: string;
}

/**
 * Every task sent to a crawler and not finished, by task id: who holds it, since when, whether it
 * is being worked on. Ending a flight gives back what it holds besides its entry: its host's slot
 * in the gate and, for a suspect, its crawler's suspect slot.
 */
export class FlightBook {
  private readonly flights = new Map<string, InFlight>();
  private readonly holdingSuspect = new Set<string>();

  constructor(private readonly gate: Pick<HostGate, 'finish'>) {}

  get size(): number {
    return this.flights.size;
  }

  values(): IterableIterator<InFlight> {
    return this.flights.values();
  }

  /** The flight of `taskId` if `sessionId` holds it; null for a stale or foreign id. */
  of(sessionId: string, taskId: string): InFlight | null {
    const flight = this.flights.get(taskId);
    return flight && flight.sessionId === sessionId ? flight : null;
  }

  /**
   * A task goes out. A second copy of a task already in flight (redelivered after a broker
   * reconnect) takes the first one's place: the host's slot is counted once, and either outcome
   * settles the task.
   */
  add(flight: InFlight, now: number): void {
    const previous = this.flights.get(flight.lease.taskId);
    if (previous) this.release(previous, now);
    if (flight.suspect) this.holdingSuspect.add(flight.sessionId);
    this.flights.set(flight.lease.taskId, flight);
  }

  holdsSuspect(sessionId: string): boolean {
    return this.holdingSuspect.has(sessionId);
  }

  /** Ends `sessionId`'s flight of `taskId`; null when it holds none. */
  end(sessionId: string, taskId: string, now: number, feedback?: RequestFeedback): InFlight | null {
    const flight = this.of(sessionId, taskId);
    if (flight) this.finish(flight, now, feedback);
    return flight;
  }

  /** Ends every flight of `sessionId`. */
  endSession(sessionId: string, now: number): InFlight[] {
    return this.endWhere((flight) => flight.sessionId === sessionId, now);
  }

  /** Ends every flight sent `maxAgeMs` ago or earlier. */
  endOlderThan(maxAgeMs: number, now: number): InFlight[] {
    return this.endWhere((flight) => now - flight.sentAt >= maxAgeMs, now);
  }

  /** Forgets every flight without touching the gate (shutdown). */
  clear(): InFlight[] {
    const all = [...this.flights.values()];
    this.flights.clear();
    this.holdingSuspect.clear();
    return all;
  }

  private endWhere(test: (flight: InFlight) => boolean, now: number): InFlight[] {
    const ended: InFlight[] = [];
    for (const flight of this.flights.values()) {
      if (!test(flight)) continue;
      this.finish(flight, now);
      ended.push(flight);
    }
    return ended;
  }

  private finish(flight: InFlight, now: number, feedback?: RequestFeedback): void {
    this.flights.delete(flight.lease.taskId);
    this.release(flight, now, feedback);
  }

  private release(flight: InFlight, now: number, feedback?: RequestFeedback): void {
    this.gate.finish(flight.lease.host, now, feedback, flight.startPending);
    if (flight.suspect) this.holdingSuspect.delete(flight.sessionId);
  }
}
