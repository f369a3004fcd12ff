/**
 * A tiny seeded PRNG (mulberry32). The generated site must render the same page byte for byte on
 * every request and in every run, so nothing here may read the clock or Math.random.
 */
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes a site seed and a page number into one 32-bit seed, so neighbouring pages do not correlate. */
export function pageSeed(siteSeed: number, page: number): number {
  let h = (siteSeed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ page, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export function randomInt(random: Random, below: number): number {
  return Math.floor(random() * below);
}
