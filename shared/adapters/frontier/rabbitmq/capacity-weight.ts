export interface CapacityWeightOptions {
  /** A capacity this far from the announced weight, as a fraction of it, is a change (0.25). */
  tolerance: number;
  /** ...once it has stayed that far for this long (a few heartbeats), so a crawler restart moves nothing. */
  settleMs: number;
}

/**
 * The weight a scheduler announces for its share of the shards: the crawler capacity it serves
 * (requests its crawlers run at once), changed only when the capacity has stayed more than
 * `tolerance` away from it for `settleMs`. Every change of weight moves shards, and a moved shard
 * drains its leases first, so a crawler restarting or a credit dipping must not move any.
 */
export class CapacityWeight {
  private announced: number | null = null;
  private offSince: number | null = null;

  constructor(private readonly options: CapacityWeightOptions) {}

  /** The weight to announce: 1 until a capacity is known, so schedulers never told share alike. */
  get weight(): number {
    return this.announced ?? 1;
  }

  /**
   * The capacity now (call it at each heartbeat, and when it changes). True when the weight changed.
   * A capacity of 0 (no crawlers) keeps the weight: demand says that, and the weight is the one to
   * come back with.
   */
  observe(capacity: number, now: number): boolean {
    if (!(capacity > 0)) {
      this.offSince = null;
      return false;
    }
    if (this.announced === null) {
      this.announced = capacity;
      return true;
    }
    if (Math.abs(capacity - this.announced) <= this.announced * this.options.tolerance) {
      this.offSince = null;
      return false;
    }
    this.offSince ??= now;
    if (now - this.offSince < this.options.settleMs) return false;
    this.announced = capacity;
    this.offSince = null;
    return true;
  }
}
