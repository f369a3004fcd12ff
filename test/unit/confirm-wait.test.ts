import { it } from 'node:test';
import assert from 'node:assert/strict';
import { confirmWaitLeft } from '../../shared/adapters/frontier/rabbitmq/publisher.js';

const LIMIT = 30_000;

it('a confirm timeout counts only the time the broker did not block the connection', () => {
  const never = { blocked: false, unblockedAt: 0 };
  assert.equal(confirmWaitLeft(never, 1_000, LIMIT, 11_000), 20_000, 'from the publish');
  assert.equal(confirmWaitLeft(never, 1_000, LIMIT, 31_000), 0, 'run out');
  assert.equal(confirmWaitLeft(never, 1_000, LIMIT, 90_000), 0, 'never negative');
  assert.equal(
    confirmWaitLeft({ blocked: true, unblockedAt: 0 }, 1_000, LIMIT, 500_000),
    LIMIT,
    'blocked: ask again later',
  );
  // Unblocked 5 s ago, long after the publish: a whole timeout from the unblock.
  assert.equal(confirmWaitLeft({ blocked: false, unblockedAt: 95_000 }, 1_000, LIMIT, 100_000), 25_000);
  // An old block, before this publish, changes nothing.
  assert.equal(confirmWaitLeft({ blocked: false, unblockedAt: 500 }, 1_000, LIMIT, 11_000), 20_000);
});
