import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenCache } from '../../scheduler/outcomes/seen-cache.js';

test('remembers URLs up to its capacity, forgetting the oldest first', () => {
  const cache = new SeenCache(3);
  for (const url of ['a', 'b', 'c']) cache.add('r', url);
  assert.ok(cache.has('r', 'a') && cache.has('r', 'b') && cache.has('r', 'c'));
  cache.add('r', 'd');
  assert.equal(cache.size, 3);
  assert.equal(cache.has('r', 'a'), false, 'oldest evicted');
  assert.ok(cache.has('r', 'd'));
  cache.add('r', 'd');
  assert.equal(cache.size, 3, 'adding twice is a no-op');
});

test('a URL seen in one run is not seen in another (each run has its own seen-set)', () => {
  const cache = new SeenCache(10);
  cache.add('run-a', 'https://a.test/');
  assert.ok(cache.has('run-a', 'https://a.test/'));
  assert.equal(cache.has('run-b', 'https://a.test/'), false);
});

test('the capacity bounds every run together, oldest first across runs', () => {
  const cache = new SeenCache(4);
  for (const url of ['a', 'b', 'c']) cache.add('old', url);
  cache.add('new', 'x');
  assert.equal(cache.size, 4);
  const held = (): string[] =>
    [...['a', 'b', 'c', 'd'].map((u) => ['old', u]), ...['x', 'y', 'z', 'w'].map((u) => ['new', u])]
      .filter(([run, url]) => cache.has(run as string, url as string))
      .map(([, url]) => url as string);
  assert.deepEqual(held(), ['a', 'b', 'c', 'x']);
  cache.add('old', 'd');
  assert.deepEqual(held(), ['b', 'c', 'd', 'x'], 'the oldest URL of all went');
  cache.add('new', 'y');
  cache.add('new', 'z');
  assert.deepEqual(held(), ['d', 'x', 'y', 'z'], 'then the next oldest, whichever run they belong to');
  cache.add('new', 'w');
  assert.deepEqual(held(), ['d', 'y', 'z', 'w'], "x, added before old's d, goes before it");
  assert.equal(cache.size, 4);
});

test('stays exact and bounded over many runs and evictions', () => {
  const cache = new SeenCache(100);
  for (let i = 0; i < 5_000; i++) cache.add(`run-${i % 7}`, `u${i}`);
  assert.equal(cache.size, 100);
  for (let i = 4_900; i < 5_000; i++) assert.ok(cache.has(`run-${i % 7}`, `u${i}`), `u${i} kept`);
  assert.equal(cache.has('run-0', 'u4893'), false);
});

test('round and round its ring: after many times its capacity, it holds exactly the newest URLs', () => {
  const cache = new SeenCache(7);
  for (let i = 0; i < 1_000; i++) {
    cache.add(i % 3 === 0 ? 'a' : 'b', `https://x.test/${i}`);
    cache.add('b', `https://x.test/${i - 1}`); // already there, or evicted and added back
  }
  assert.equal(cache.size, 7);
  const held = Array.from({ length: 1_000 }, (_, i) => i).filter(
    (i) => cache.has('a', `https://x.test/${i}`) || cache.has('b', `https://x.test/${i}`),
  );
  assert.ok(held.length <= 7 && held.includes(999) && held.every((i) => i > 990), `held ${held.join(',')}`);
});
