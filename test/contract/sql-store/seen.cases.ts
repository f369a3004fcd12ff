import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { DefineCase } from '../sql-store.contract.js';
import { rejectsWith } from './expect.js';

const keyOf = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 32);
const keys = (n: number, from = 0): string[] =>
  Array.from({ length: n }, (_, i) => keyOf(`http://127.0.0.1/p/${from + i}`));
const by = (schedulerId: string, at = 1_000): { schedulerId: string; at: number } => ({ schedulerId, at });

export function seenCases(define: DefineCase): void {
  define(
    'seen: a key is claimed once; known and count see it; scopes and runs are apart',
    async ({ store }) => {
      const [a, b, c] = keys(3);
      assert.deepEqual(await store.seen.claim('p1', 'r1', [a!, b!, a!], by('s1')), new Set([a, b]));
      assert.deepEqual(await store.seen.claim('p1', 'r1', [b!, c!], by('s2')), new Set([c]));
      assert.deepEqual(await store.seen.claim('p1', 'r1', [a!, b!, c!], by('s1')), new Set());
      assert.deepEqual(await store.seen.known('p1', 'r1', [a!, c!, keyOf('other')]), new Set([a, c]));
      assert.equal(await store.seen.count('p1', 'r1'), 3);
      // Another run, another prefix: their own sets.
      assert.deepEqual(await store.seen.claim('p1', 'r2', [a!], by('s1')), new Set([a]));
      assert.deepEqual(await store.seen.claim('p2', 'r1', [a!], by('s1')), new Set([a]));
      assert.deepEqual(await store.seen.known('p2', 'r2', [a!]), new Set());
      assert.deepEqual(await store.seen.claim('p1', 'r1', [], by('s1')), new Set());
      assert.deepEqual(await store.seen.known('p1', 'r1', []), new Set());

      assert.equal(await store.seen.forget('p1', 'r1'), 3);
      assert.equal(await store.seen.count('p1', 'r1'), 0);
      assert.equal(await store.seen.count('p1', 'r2'), 1);
      assert.deepEqual(await store.seen.claim('p1', 'r1', [a!], by('s1')), new Set([a]));
    },
  );

  define('seen: batches larger than one statement are claimed and read whole', async ({ store }) => {
    const first = keys(700);
    assert.equal((await store.seen.claim('p', 'r', first, by('s1'))).size, 700);
    const second = keys(700, 350);
    const won = await store.seen.claim('p', 'r', second, by('s2'));
    assert.deepEqual(won, new Set(keys(350, 700)));
    assert.equal((await store.seen.known('p', 'r', second)).size, 700);
    assert.equal(await store.seen.count('p', 'r'), 1_050);
  });

  define(
    'seen: two stores claiming the same keys at once: each key won exactly once',
    async ({ store, another }) => {
      const other = await another();
      const all = keys(400);
      // Overlapping batches, in different orders, in flight together.
      const [x, y] = await Promise.all([
        store.seen.claim('p', 'r', all.slice(0, 300), by('s1')),
        other.seen.claim('p', 'r', all.slice(100).reverse(), by('s2')),
      ]);
      for (const k of x) assert.equal(y.has(k), false, `key ${k} won twice`);
      assert.equal(x.size + y.size, 400);
      assert.equal(await store.seen.count('p', 'r'), 400);
    },
  );

  define('seen: malformed keys and ids are refused before anything is written', async ({ store }) => {
    const [a] = keys(1);
    await rejectsWith(store.seen.claim('p', 'r', [a!, 'not-a-key'], by('s1')), 'SQL_INVALID_VALUE', {
      field: 'keys',
    });
    await rejectsWith(store.seen.claim('p', 'r', [a!.toUpperCase()], by('s1')), 'SQL_INVALID_VALUE', {
      field: 'keys',
    });
    await rejectsWith(store.seen.known('', 'r', [a!]), 'SQL_INVALID_VALUE', { field: 'scope' });
    await rejectsWith(store.seen.claim('p', 'r', [a!], by('')), 'SQL_INVALID_VALUE', {
      field: 'schedulerId',
    });
    assert.equal(await store.seen.count('p', 'r'), 0);
  });

  define(
    "seen: each scheduler's run counters are kept as it last wrote them, per prefix, until the run is forgotten",
    async ({ store }) => {
      const c = (runId: string, total: number, done: number, failed: number) => ({
        runId,
        total,
        done,
        failed,
      });
      await store.seen.reportCounts('p1', 's1', 1_000, [c('r1', 10, 2, 0), c('r2', 5, 5, 0)]);
      await store.seen.reportCounts('p1', 's2', 1_001, [c('r1', 7, 1, 1)]);
      await store.seen.reportCounts('p2', 's1', 1_002, [c('r1', 99, 0, 0)]);
      // A later report replaces the scheduler's counters of that run, and only those.
      await store.seen.reportCounts('p1', 's1', 2_000, [c('r1', 12, 9, 1)]);
      await store.seen.reportCounts('p1', 's1', 2_001, []);
      const sorted = (rows: Awaited<ReturnType<typeof store.seen.listCounts>>) =>
        [...rows].sort((a, b) => `${a.runId}${a.schedulerId}`.localeCompare(`${b.runId}${b.schedulerId}`));
      assert.deepEqual(sorted(await store.seen.listCounts('p1')), [
        { schedulerId: 's1', runId: 'r1', total: 12, done: 9, failed: 1, at: 2_000 },
        { schedulerId: 's2', runId: 'r1', total: 7, done: 1, failed: 1, at: 1_001 },
        { schedulerId: 's1', runId: 'r2', total: 5, done: 5, failed: 0, at: 1_000 },
      ]);
      assert.equal((await store.seen.listCounts('p2')).length, 1);
      assert.deepEqual(await store.seen.listCounts('p3'), []);

      await store.seen.claim('p1', 'r1', keys(2), by('s1'));
      assert.equal(await store.seen.forget('p1', 'r1'), 2);
      assert.deepEqual(
        (await store.seen.listCounts('p1')).map((r) => r.runId),
        ['r2'],
        "a forgotten run's counters go with its keys",
      );
      await rejectsWith(
        store.seen.reportCounts('p1', 's1', 3_000, [c('r3', -1, 0, 0)]),
        'SQL_INVALID_VALUE',
        {
          field: 'total',
        },
      );
      await rejectsWith(store.seen.reportCounts('p1', '', 3_000, [c('r3', 1, 0, 0)]), 'SQL_INVALID_VALUE', {
        field: 'schedulerId',
      });
      assert.deepEqual(
        (await store.seen.listCounts('p1')).map((r) => r.runId),
        ['r2'],
        'nothing of a refused report is written',
      );
    },
  );
}
