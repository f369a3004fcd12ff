/**
 * A crawler connected to several schedulers splits its concurrency among them: each session gets
 * an even share (the remainder to the first ones), at least 1, so no scheduler is left without a
 * crawler slot. With more schedulers than slots the total goes up to one per scheduler.
 */
export function concurrencyShares(total: number, schedulers: number): number[] {
  if (!Number.isInteger(total) || total < 1) throw new RangeError(`concurrency must be ≥ 1, got ${total}`);
  if (!Number.isInteger(schedulers) || schedulers < 1) {
    throw new RangeError(`need at least one scheduler, got ${schedulers}`);
  }
  const base = Math.floor(total / schedulers);
  const extra = total % schedulers;
  return Array.from({ length: schedulers }, (_, i) => Math.max(1, base + (i < extra ? 1 : 0)));
}
