import { PRIORITY_LEVELS } from '../../protocol/task-priority.js';

/**
 * Each level's share of the leases while every level has work: level 3 gets 8 of every 15, level
 * 2 gets 4, level 1 gets 2 and level 0 gets 1. A level without work gives its share to the others.
 */
export const LEVEL_WEIGHTS: readonly number[] = Array.from(
  { length: PRIORITY_LEVELS },
  (_, level) => 2 ** level,
);

/**
 * Chooses the level each leased task comes from, by smooth weighted round-robin (nginx's
 * upstream balancing): every pick adds each level's weight to its credit, the level with the most
 * credit wins (the higher level on a tie) and pays back the sum of the weights in play. Higher
 * levels go first and most often, yet among 15 picks with every level busy, level 0 gets exactly
 * one: no level starves, however much work the others have. The credits carry over between
 * lease calls, so a caller leasing one task at a time gets the same shares.
 */
export class LevelPicker {
  private readonly credit: number[];

  constructor(private readonly weights: readonly number[] = LEVEL_WEIGHTS) {
    if (weights.length === 0 || weights.some((w) => !(w > 0))) {
      throw new RangeError('level weights must be positive');
    }
    this.credit = weights.map(() => 0);
  }

  /** The level of the next task, among those `hasWork` accepts; null when none has work. */
  next(hasWork: (level: number) => boolean): number | null {
    let best = -1;
    let total = 0;
    for (let level = this.weights.length - 1; level >= 0; level--) {
      if (!hasWork(level)) continue;
      const weight = this.weights[level] as number;
      this.credit[level] = (this.credit[level] as number) + weight;
      total += weight;
      if (best < 0 || (this.credit[level] as number) > (this.credit[best] as number)) best = level;
    }
    if (best < 0) return null;
    this.credit[best] = (this.credit[best] as number) - total;
    return best;
  }
}

/**
 * Takes up to `max` items from per-level candidate lists (index = level, each oldest first) in
 * the picker's order. The lists are consumed from the front.
 */
export function pickByLevel<T>(picker: LevelPicker, candidates: T[][], max: number): T[] {
  const taken: T[] = [];
  const heads = candidates.map(() => 0);
  while (taken.length < max) {
    const level = picker.next((l) => (heads[l] as number) < (candidates[l]?.length ?? 0));
    if (level === null) break;
    const index = heads[level] as number;
    heads[level] = index + 1;
    taken.push((candidates[level] as T[])[index] as T);
  }
  return taken;
}
