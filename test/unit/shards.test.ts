import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ownerOfShard, shardOfHost, shardsOwnedBy } from '../../shared/adapters/frontier/rabbitmq/shards.js';
import { parseHeartbeat } from '../../shared/adapters/frontier/rabbitmq/shard-membership.js';

const SHARDS = 64;
const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `scheduler-${i}`);

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
    const owned = members.map((m) => shardsOwnedBy(m, members, SHARDS));
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
    const after = [...before, 'newcomer'];
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
      if (was !== before[0]) assert.equal(ownerOfShard(s, left), was, `shard ${s} kept its owner`);
    }
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
  });

  it('refuses what is not one, and drops bad busy counts', () => {
    assert.equal(parseHeartbeat(Buffer.from('not json')), null);
    assert.equal(parse(null), null);
    assert.equal(parse({ ...good, v: 2 }), null);
    assert.equal(parse({ ...good, id: '' }), null);
    assert.equal(parse({ ...good, held: [-1] }), null);
    assert.equal(parse({ ...good, held: 'all' }), null);
    assert.equal(parse({ ...good, demand: 'yes' }), null);
    assert.deepEqual(parse({ ...good, busy: { r: -1, s: 'x', t: 2 } })?.busy, { t: 2 });
    assert.deepEqual(parse({ ...good, counts: { r: [1, 2], s: [1, -1, 0], t: [3, 2, 1] } })?.counts, {
      t: [3, 2, 1],
    });
  });
});
