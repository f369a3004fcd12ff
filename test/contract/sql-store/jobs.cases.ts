import assert from 'node:assert/strict';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, job, rejectsWith } from './expect.js';

/** Settings with what tends to break a JSON column: non-BMP and combining text, nesting, numbers. */
export const AWKWARD_SETTINGS = {
  seeds: ['http://例え.テスト/パス?q=ü', 'http://127.0.0.1:8080/a b'],
  name: 'Ünïcödé 爬虫 🕷️ עברית e\u0301 "quoted" \\ back\nslash\ttab',
  nested: { deep: { deeper: [1, [2, [3, { four: 4 }]]], empty: {}, list: [] } },
  numbers: [0, -1, 1.5, 1e-7, 9_007_199_254_740_991, -0.25],
  flags: [true, false, null],
  emptyString: '',
  long: 'x'.repeat(100_000) + '終',
};

export function jobCases(define: DefineCase): void {
  define('jobs: create, get, update and delete a job', async ({ store }) => {
    const created = await store.jobs.create(job({ id: 'j1', name: 'first', createdAt: 10, updatedAt: 10 }));
    assert.deepEqual(await store.jobs.get('j1'), created);
    assert.equal(await store.jobs.get('missing'), null);

    const renamed = await store.jobs.update('j1', { name: 'renamed', updatedAt: 20 });
    assert.deepEqual(renamed, { ...created, name: 'renamed', updatedAt: 20 });
    const resettled = await store.jobs.update('j1', { settings: { maxPages: 5 }, updatedAt: 30 });
    assert.deepEqual(resettled, { ...created, name: 'renamed', settings: { maxPages: 5 }, updatedAt: 30 });
    assert.deepEqual(await store.jobs.get('j1'), resettled);
    assert.equal(await store.jobs.update('missing', { name: 'x', updatedAt: 1 }), null);

    assert.equal(await store.jobs.delete('j1'), true);
    assert.equal(await store.jobs.delete('j1'), false);
    assert.equal(await store.jobs.get('j1'), null);
    assert.deepEqual((await store.jobs.list()).items, []);
    // A deleted job's name is free again.
    await store.jobs.create(job({ name: 'renamed' }));
  });

  define('jobs: settings round-trip as JSON (unicode, nesting, numbers, long text)', async ({ store }) => {
    const created = await store.jobs.create(job({ id: 'awkward', settings: AWKWARD_SETTINGS }));
    assert.deepEqual(created.settings, AWKWARD_SETTINGS);
    assert.deepEqual((await store.jobs.get('awkward'))?.settings, AWKWARD_SETTINGS);
    assert.deepEqual((await store.jobs.list()).items[0]?.settings, AWKWARD_SETTINGS);
    const unicodeName = await store.jobs.create(job({ name: '名前 🕸️ ñ', settings: null }));
    assert.equal((await store.jobs.get(unicodeName.id))?.name, '名前 🕸️ ñ');
    assert.equal((await store.jobs.get(unicodeName.id))?.settings, null);
  });

  define(
    'jobs: a taken id or name is SQL_CONFLICT (409) naming the field; names are case-sensitive',
    async ({ store }) => {
      await store.jobs.create(job({ id: 'same', name: 'Alpha' }));
      const byId = await rejectsWith(store.jobs.create(job({ id: 'same' })), 'SQL_CONFLICT', { field: 'id' });
      assert.equal(byId.status, 409);
      assert.equal(byId.retriable, false);
      const byName = await rejectsWith(store.jobs.create(job({ name: 'Alpha' })), 'SQL_CONFLICT', {
        field: 'name',
      });
      assert.doesNotMatch(byName.message, /Alpha|INSERT|VALUES/);
      await store.jobs.create(job({ id: 'other', name: 'alpha' }));
      await rejectsWith(store.jobs.update('other', { name: 'Alpha', updatedAt: 5 }), 'SQL_CONFLICT', {
        field: 'name',
      });
      assert.equal((await store.jobs.get('other'))?.name, 'alpha');
      // The failed statements left the store usable.
      assert.equal((await store.jobs.list()).items.length, 2);
    },
  );

  define('jobs: listed oldest first, paged by cursor, ties broken by id', async ({ store }) => {
    const times = [50, 10, 30, 30, 20, 40, 30];
    const ids = ['g', 'a', 'e', 'c', 'b', 'f', 'd'];
    for (const [i, id] of ids.entries()) await store.jobs.create(job({ id, createdAt: times[i] ?? 0 }));
    const { pages, items } = await allPages((after) => store.jobs.list({ limit: 3, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    assert.deepEqual(
      items.map((j) => j.id),
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
    );
    const whole = await store.jobs.list({ limit: 7 });
    assert.equal(whole.items.length, 7);
    assert.equal(whole.next, null);
    assert.equal((await store.jobs.list()).items.length, 7); // default limit 50
  });

  define(
    'paging: limits are clamped to 1..500; a foreign or broken cursor is SQL_BAD_CURSOR (400)',
    async ({ store }) => {
      for (let i = 0; i < 3; i += 1) await store.jobs.create(job({ createdAt: i }));
      assert.equal((await store.jobs.list({ limit: 0 })).items.length, 1);
      assert.equal((await store.jobs.list({ limit: -5 })).items.length, 1);
      assert.equal((await store.jobs.list({ limit: 10_000 })).items.length, 3);
      const bad = await rejectsWith(store.jobs.list({ after: 'not-a-cursor' }), 'SQL_BAD_CURSOR');
      assert.equal(bad.status, 400);
      const jobsCursor = (await store.jobs.list({ limit: 1 })).next;
      assert.ok(jobsCursor);
      await rejectsWith(store.tokens.list({ after: jobsCursor }), 'SQL_BAD_CURSOR');
      await rejectsWith(
        store.jobs.list({ after: Buffer.from('["jobs","x","y"]').toString('base64url') }),
        'SQL_BAD_CURSOR',
      );
    },
  );

  define('values the store cannot hold are SQL_INVALID_VALUE (400) on every dialect', async ({ store }) => {
    const long = await rejectsWith(store.jobs.create(job({ id: 'x'.repeat(129) })), 'SQL_INVALID_VALUE', {
      field: 'id',
    });
    assert.equal(long.status, 400);
    await rejectsWith(store.jobs.create(job({ name: 'n'.repeat(201) })), 'SQL_INVALID_VALUE', {
      field: 'name',
    });
    await rejectsWith(store.jobs.create(job({ name: '' })), 'SQL_INVALID_VALUE', { field: 'name' });
    await rejectsWith(store.jobs.create(job({ createdAt: 1.5 })), 'SQL_INVALID_VALUE', {
      field: 'createdAt',
    });
    // 128 and 200 characters are fine.
    await store.jobs.create(job({ id: 'i'.repeat(128), name: 'n'.repeat(200) }));
    assert.equal((await store.jobs.get('i'.repeat(128)))?.name.length, 200);
  });
}
