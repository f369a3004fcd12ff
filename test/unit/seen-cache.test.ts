import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenCache } from '../../scheduler/outcomes/seen-cache.js';

test('remembers URLs up to its capacity, forgetting the oldest first', () => {
  const cache = new SeenCache(3);
  for (const url of ['a', 'b', 'c']) cache.add(url);
  assert.ok(cache.has('a') && cache.has('b') && cache.has('c'));
  cache.add('d');
  assert.equal(cache.size, 3);
  assert.equal(cache.has('a'), false, 'oldest evicted');
  assert.ok(cache.has('d'));
  cache.add('d');
  assert.equal(cache.size, 3, 'adding twice is a no-op');
});
