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
