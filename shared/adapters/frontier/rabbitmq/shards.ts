/**
 * Hosts split among schedulers (ACKCRAWL_SHARDS): every host falls in one of a fixed number of
 * shards by a hash of its name, and every shard has one owner among the schedulers that want work,
 * chosen by weighted rendezvous (highest random weight) hashing, each scheduler weighted by the
 * crawler capacity it serves. A scheduler joining or leaving, or its weight changing, moves only
 * shards to or from it: its share of them, none between the others.
 */

/** Shards per prefix at most: each is a queue per run and level, so this bounds the queue count. */
export const MAX_SHARDS = 64;

/** FNV-1a, 32 bits: cheap, stable across processes and versions, spreads host names well. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** MurmurHash3's finaliser: FNV alone leaves close inputs (`a:1`, `a:2`) with close weights. */
function mix(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard of a host (0 when there is one shard). Every scheduler of a prefix computes the same. */
export function shardOfHost(host: string, shards: number): number {
  return shards <= 1 ? 0 : mix(fnv1a(host)) % shards;
}

/** A scheduler that may own shards, and its weight: its share is its weight over the sum of all. */
export interface ShardMember {
  id: string;
  /** Positive: the crawler capacity it announces (see CapacityWeight), or 1 for all alike. */
  weight: number;
}

/**
 * A member's score for a shard: weighted rendezvous hashing, `-weight / ln(u)` with `u` uniform in
 * (0, 1) from the hash of member and shard. The highest score wins, so each member wins a share of
 * the shards proportional to its weight; with equal weights the order is the hashes' own.
 */
function score(member: ShardMember, shard: number): number {
  const u = (mix(fnv1a(`${member.id}\n${shard}`)) + 0.5) / 2 ** 32;
  return -member.weight / Math.log(u);
}

/** The owner of `shard` among `members`, or undefined when there are none. */
export function ownerOfShard(shard: number, members: readonly ShardMember[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const member of members) {
    const s = score(member, shard);
    // Ties (vanishingly rare) go to the smaller id, so every member decides alike.
    if (s > bestScore || (s === bestScore && best !== undefined && member.id < best)) {
      best = member.id;
      bestScore = s;
    }
  }
  return best;
}

/** The shards `member` owns among `members` (which should include it). */
export function shardsOwnedBy(member: string, members: readonly ShardMember[], shards: number): number[] {
  const owned: number[] = [];
  for (let shard = 0; shard < shards; shard++) {
    if (ownerOfShard(shard, members) === member) owned.push(shard);
  }
  return owned;
}
