/** One slot's recent crashes: `limit` of them within `windowMs` is a crash loop. */
export class CrashHistory {
  private times: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Records a crash at `at`; returns how many fall within the window. */
  add(at: number): number {
    this.times = [...this.times.filter((t) => at - t < this.windowMs), at];
    return this.times.length;
  }

  looping(at: number): boolean {
    return this.times.filter((t) => at - t < this.windowMs).length >= this.limit;
  }

  clear(): void {
    this.times = [];
  }
}
