import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ownerOfShard,
  shardOfHost,
  shardsOwnedBy,
  type ShardMember,
} from '../../shared/adapters/frontier/rabbitmq/shards.js';
import { CapacityWeight } from '../../shared/adapters/frontier/rabbitmq/capacity-weight.js';
import { parseHeartbeat } from '../../shared/adapters/frontier/rabbitmq/shard-membership.js';

const SHARDS = 64;
const ids = (n: number): ShardMember[] =>
  Array.from({ length: n }, (_, i) => ({ id: `scheduler-${i}`, weight: 1 }));
/** Shards each member owns among `members`, by id. */
const shares = (members: readonly ShardMember[], shards: number): Map<string, number> => {
  const owned = new Map<string, number>();
  for (let s = 0; s < shards; s++) {
    const owner = ownerOfShard(s, members) as string;
    owned.set(owner, (owned.get(owner) ?? 0) + 1);
  }
  return owned;
};

describe('shards: hosts split among schedulers', () => {
  it('a host always falls in the same shard, and hosts spread over all of them', () => {
    assert.equal(shardOfHost('example.com', 16), shardOfHost('example.com', 16));
    assert.equal(shardOfHost('example.com', 1), 0);
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const s = shardOfHost(`host${i}.example`, 16);
      counts[s] = (counts[s] ?? 0) + 1;
    }
    for (const n of counts) assert.ok(n > 800 && n < 1_200, `about 1,000 hosts per shard, got ${n}`);
  });

  it('every shard has one owner, and the owners share the shards about evenly', () => {
    const members = ids(4);
    const owned = members.map((m) => shardsOwnedBy(m.id, members, SHARDS));
    assert.equal(owned.flat().length, SHARDS);
    assert.equal(new Set(owned.flat()).size, SHARDS);
    for (const list of owned) assert.ok(list.length >= 8 && list.length <= 24, `16 ± 8, got ${list.length}`);
    assert.equal(ownerOfShard(3, []), undefined);
  });

  it('the order members are listed in does not matter', () => {
    const members = ids(5);
    const reversed = [...members].reverse();
    for (let s = 0; s < SHARDS; s++) assert.equal(ownerOfShard(s, members), ownerOfShard(s, reversed));
  });

  it('a member joining takes shards only from the others; one leaving gives only its own away', () => {
    const before = ids(4);
    const after = [...before, { id: 'newcomer', weight: 1 }];
    let moved = 0;
    for (let s = 0; s < SHARDS; s++) {
      const was = ownerOfShard(s, before);
      const now = ownerOfShard(s, after);
      if (was !== now) {
        assert.equal(now, 'newcomer', `shard ${s} moved between old members`);
        moved += 1;
      }
    }
    assert.ok(moved > 0 && moved <= 24, `about a fifth of the shards moved, got ${moved}`);
    const left = before.slice(1);
    for (let s = 0; s < SHARDS; s++) {
      const was = ownerOfShard(s, before);
      if (was !== before[0]?.id) assert.equal(ownerOfShard(s, left), was, `shard ${s} kept its owner`);
    }
  });
});

describe('shards weighed by crawler capacity', () => {
  it('each member owns shards in proportion to its weight', () => {
    const owned = shares(
      [
        { id: 'big', weight: 96 },
        { id: 'small', weight: 32 },
      ],
      10_000,
    );
    const big = (owned.get('big') ?? 0) / 10_000;
    assert.ok(
      Math.abs(big - 0.75) < 0.02,
      `three quarters to the member with three times the capacity, got ${big}`,
    );
    const three = shares(
      [
        { id: 'a', weight: 10 },
        { id: 'b', weight: 20 },
        { id: 'c', weight: 70 },
      ],
      10_000,
    );
    for (const [id, want] of [
      ['a', 0.1],
      ['b', 0.2],
      ['c', 0.7],
    ] as const) {
      const got = (three.get(id) ?? 0) / 10_000;
      assert.ok(Math.abs(got - want) < 0.02, `${id}: ${want} of the shards, got ${got}`);
    }
  });

  it('a weight changing moves shards only to or from that member, none between the others', () => {
    const before = [
      { id: 'a', weight: 32 },
      { id: 'b', weight: 32 },
      { id: 'c', weight: 32 },
    ];
    const after = before.map((m) => (m.id === 'c' ? { id: 'c', weight: 96 } : m));
    let moved = 0;
    for (let s = 0; s < 1_000; s++) {
      const was = ownerOfShard(s, before);
      const now = ownerOfShard(s, after);
      if (was === now) continue;
      assert.equal(now, 'c', `shard ${s} moved from ${was} to ${now}`);
      moved += 1;
    }
    // c goes from a third to three fifths: about 267 of 1,000 shards move to it.
    assert.ok(moved > 200 && moved < 330, `about 267 shards moved, got ${moved}`);
  });

  it('equal weights split as the plain rendezvous hash does, whatever the weight', () => {
    const ones = ids(5);
    const many = ones.map((m) => ({ ...m, weight: 48 }));
    for (let s = 0; s < SHARDS; s++) assert.equal(ownerOfShard(s, ones), ownerOfShard(s, many));
  });
});

describe('the capacity weight a scheduler announces', () => {
  const weight = () => new CapacityWeight({ tolerance: 0.25, settleMs: 3_000 });

  it('is 1 until a capacity is known, then that capacity at once', () => {
    const w = weight();
    assert.equal(w.weight, 1);
    assert.equal(w.observe(0, 0), false, 'no crawlers: nothing to weigh');
    assert.equal(w.weight, 1);
    assert.equal(w.observe(64, 10), true);
    assert.equal(w.weight, 64);
  });

  it('moves only once the capacity has stayed more than a quarter off for the settle time', () => {
    const w = weight();
    w.observe(64, 0);
    assert.equal(w.observe(56, 1_000), false, 'an eighth off: no change');
    assert.equal(w.observe(32, 2_000), false, 'a crawler went: not yet');
    assert.equal(w.observe(32, 4_000), false);
    assert.equal(w.observe(64, 4_500), false, 'it came back: the clock restarts');
    assert.equal(w.observe(32, 5_000), false);
    assert.equal(w.observe(32, 7_999), false);
    assert.equal(w.observe(32, 8_000), true, 'off for 3 s: the new weight');
    assert.equal(w.weight, 32);
    assert.equal(w.observe(0, 9_000), false, 'no crawlers: the weight stays for when they come back');
    assert.equal(w.weight, 32);
  });
});

describe('shard heartbeats', () => {
  const good = {
    v: 1,
    id: 'a',
    queue: 'amq.gen-1',
    shards: 8,
    held: [1, 2],
    demand: true,
    busy: { r: 3 },
    counts: { r: [5, 2, 1] },
  };
  const parse = (value: unknown) => parseHeartbeat(Buffer.from(JSON.stringify(value)));

  it('reads a heartbeat', () => {
    assert.deepEqual(parse(good), good);
    assert.deepEqual(parse({ ...good, capacity: 96 }), { ...good, capacity: 96 });
  });

  it('refuses what is not one, and drops bad busy counts', () => {
    assert.equal(parseHeartbeat(Buffer.from('not json')), null);
    assert.equal(parse(null), null);
    assert.equal(parse({ ...good, v: 2 }), null);
    assert.equal(parse({ ...good, id: '' }), null);
    assert.equal(parse({ ...good, held: [-1] }), null);
    assert.equal(parse({ ...good, held: 'all' }), null);
    assert.equal(parse({ ...good, demand: 'yes' }), null);
    for (const capacity of [0, -3, 'lots', null, Number.POSITIVE_INFINITY]) {
      assert.equal(parse({ ...good, capacity })?.capacity, undefined, `capacity ${String(capacity)}`);
    }
    assert.deepEqual(parse({ ...good, busy: { r: -1, s: 'x', t: 2 } })?.busy, { t: 2 });
    assert.deepEqual(parse({ ...good, counts: { r: [1, 2], s: [1, -1, 0], t: [3, 2, 1] } })?.counts, {
      t: [3, 2, 1],
    });
  });
});
