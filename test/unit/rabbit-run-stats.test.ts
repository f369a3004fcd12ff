import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runStats } from '../../shared/adapters/frontier/rabbitmq/run-stats.js';
import type { LedgerRun } from '../../shared/adapters/frontier/rabbitmq/ledger.js';

const run = (runId: string, fields: Partial<LedgerRun>): LedgerRun => ({
  runId,
  state: 'active',
  total: 0,
  done: 0,
  failed: 0,
  purged: false,
  retired: false,
  ...fields,
});

describe('RabbitMQ run stats', () => {
  test('pending tasks no count shows are delayed as far as the delay queues hold, else ready', () => {
    const stats = runStats([run('a', { total: 10, done: 2 }), run('b', { total: 5 })], {
      queued: new Map([
        ['a', 3],
        ['b', 1],
      ]),
      waiting: 4,
      bufferedOf: (id) => (id === 'a' ? 1 : 0),
      leasedOf: (id) => (id === 'a' ? 2 : 1),
    });
    // a: pending 8, ready 4, leased 2 -> 2 unseen, both delayed (4 waiting).
    assert.deepEqual(stats.get('a'), {
      ready: 4,
      delayed: 2,
      leased: 2,
      done: 2,
      failed: 0,
      total: 10,
      cancelled: 0,
    });
    // b: pending 5, ready 1, leased 1 -> 3 unseen, 2 delayed (what is left), 1 on its way: ready.
    assert.deepEqual(stats.get('b'), {
      ready: 2,
      delayed: 2,
      leased: 1,
      done: 0,
      failed: 0,
      total: 5,
      cancelled: 0,
    });
  });

  test("a cancelled run's pending tasks are cancelled, its leases still out are leased", () => {
    const stats = runStats([run('c', { state: 'cancelled', total: 6, done: 1, failed: 1 })], {
      queued: new Map(),
      waiting: 3,
      bufferedOf: () => 0,
      leasedOf: () => 1,
    });
    assert.deepEqual(stats.get('c'), {
      ready: 0,
      delayed: 0,
      leased: 1,
      done: 1,
      failed: 1,
      total: 6,
      cancelled: 3,
    });
  });
});
