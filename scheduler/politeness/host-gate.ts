/**
 * Per-host politeness: at most `concurrency` requests in flight to a host and at least `delayMs`
 * between two request starts. The scheduler is the single owner of a host's state, so the limits
 * hold however many crawler processes there are.
 */
export interface HostGateOptions {
  concurrency: number;
  delayMs: number;
}

interface HostState {
  inFlight: number;
  nextStartAt: number;
}

export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  constructor(private options: HostGateOptions) {}

  /** New limits apply to the next request start; requests in flight stay counted. */
  configure(options: HostGateOptions): void {
    this.options = options;
  }

  /** 0 when a request to `host` may start at `now`; otherwise ms to wait (Infinity: wait for a finish). */
  waitMs(host: string, now: number): number {
    const state = this.hosts.get(host);
    if (!state) return 0;
    if (state.inFlight >= this.options.concurrency) return Infinity;
    return Math.max(0, state.nextStartAt - now);
  }

  start(host: string, now: number): void {
    const state = this.hosts.get(host) ?? { inFlight: 0, nextStartAt: 0 };
    state.inFlight += 1;
    state.nextStartAt = now + this.options.delayMs;
    this.hosts.set(host, state);
  }

  finish(host: string, now: number): void {
    const state = this.hosts.get(host);
    if (!state) return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    // Idle hosts whose delay has passed hold no information: drop them so memory stays flat.
    if (state.inFlight === 0 && state.nextStartAt <= now) this.hosts.delete(host);
  }

  /** Push a host's next start back, e.g. after a Retry-After. */
  defer(host: string, untilMs: number): void {
    const state = this.hosts.get(host) ?? { inFlight: 0, nextStartAt: 0 };
    state.nextStartAt = Math.max(state.nextStartAt, untilMs);
    this.hosts.set(host, state);
  }

  inFlight(host: string): number {
    return this.hosts.get(host)?.inFlight ?? 0;
  }
}
