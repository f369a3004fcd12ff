/** A clock that moves only when a test says so. Pass `() => clock.now()` where a `clock` is taken. */
export class FakeClock {
  private current: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(ms: number): void {
    this.current = ms;
  }

  /** Bound `now`, for options that take a `() => number`. */
  readonly fn = (): number => this.current;
}
