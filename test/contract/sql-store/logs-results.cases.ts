import assert from 'node:assert/strict';
import type { LogRow, ResultRow } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { AWKWARD_SETTINGS } from './jobs.cases.js';
import { allPages, rejectsWith } from './expect.js';

const log = (runId: string, i: number, fields: Partial<LogRow> = {}): LogRow => ({
  runId,
  url: `http://127.0.0.1/page/${i}`,
  code: i % 3 === 0 ? 'HTTP_503' : 'TIMEOUT',
  attempts: 1 + (i % 3),
  lastError: `attempt ${i} failed`,
  final: i % 3 === 2,
  at: 1_000 + i,
  ...fields,
});

export const result = (captureId: string, fields: Partial<ResultRow> = {}): ResultRow => ({
  captureId,
  runId: 'run-1',
  jobId: 'job-1',
  url: `http://127.0.0.1/${captureId}`,
  status: 200,
  data: { title: captureId },
  at: 10,
  title: null,
  author: null,
  publishedAt: null,
  language: null,
  description: null,
  canonicalUrl: null,
  mainText: null,
  fetchedAt: null,
  ...fields,
});

export function logAndResultCases(define: DefineCase): void {
  define('logs: a batch is appended and listed oldest first, paged, per run', async ({ store }) => {
    await store.logs.append(Array.from({ length: 12 }, (_, i) => log('run-a', i)));
    await store.logs.append([log('run-b', 0)]);
    await store.logs.append([]);
    const { pages, items } = await allPages((after) => store.logs.list('run-a', { limit: 5, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [5, 5, 2],
    );
    assert.deepEqual(
      items.map((l) => l.url),
      Array.from({ length: 12 }, (_, i) => `http://127.0.0.1/page/${i}`),
    );
    const { id, ...first } = items[0] ?? { id: '' };
    assert.equal(typeof id, 'string');
    assert.deepEqual(first, { ...log('run-a', 0), retriedAt: null, requeuedAt: null });
    assert.equal(new Set(items.map((l) => l.id)).size, 12);
    assert.equal((await store.logs.list('run-b')).items.length, 1);
    assert.deepEqual((await store.logs.list('run-none')).items, []);
  });

  define(
    'logs: a final failure is marked retried once, listed to queue until marked requeued',
    async ({ store }) => {
      await store.logs.append(Array.from({ length: 6 }, (_, i) => log('run-r', i)));
      await store.logs.append([log('run-other', 2)]);
      const rows = (await store.logs.list('run-r')).items;
      const [final, other] = rows.filter((l) => l.final);
      const retry = rows.find((l) => !l.final);
      assert.ok(final && other && retry);
      assert.deepEqual(await store.logs.get(final.id), final);
      assert.equal(await store.logs.get('999999999'), null);
      assert.equal(await store.logs.get('not-an-id'), null);
      assert.equal(await store.logs.markRetried(final.id, 5_000), true);
      assert.equal(await store.logs.markRetried(final.id, 6_000), false, 'once');
      assert.equal(await store.logs.markRetried(retry.id, 5_000), false, 'only a final failure');
      assert.equal(await store.logs.markRetried('nope', 5_000), false);
      assert.equal(await store.logs.markRetried(other.id, 5_001), true);
      assert.deepEqual(
        (await store.logs.retriesToQueue('run-r', 10)).map((l) => [l.id, l.retriedAt, l.requeuedAt]),
        [
          [final.id, 5_000, null],
          [other.id, 5_001, null],
        ],
      );
      assert.deepEqual((await store.logs.retriesToQueue('run-other', 10)).length, 0);
      assert.equal((await store.logs.retriesToQueue('run-r', 1)).length, 1);
      await store.logs.markRequeued(final.id, 7_000);
      await store.logs.markRequeued(final.id, 8_000);
      assert.deepEqual(
        (await store.logs.retriesToQueue('run-r', 10)).map((l) => l.id),
        [other.id],
      );
      const marked = await store.logs.get(final.id);
      assert.equal(marked?.retriedAt, 5_000);
      assert.equal(marked?.requeuedAt, 7_000, 'the first mark stays');
    },
  );

  define("logs: one URL's rows in a run, newest first, bounded", async ({ store }) => {
    const url = 'http://127.0.0.1/page/7';
    await store.logs.append([
      log('run-u', 7, { final: false, code: 'TIMEOUT', attempts: 1, at: 1 }),
      log('run-u', 8),
      log('run-u', 7, { final: false, code: 'HTTP_503', attempts: 2, at: 2 }),
      log('run-other', 7, { final: true }),
    ]);
    await store.logs.append([log('run-u', 7, { final: true, code: 'HTTP_503', attempts: 3, at: 3 })]);
    const rows = await store.logs.ofUrl('run-u', url, 10);
    assert.deepEqual(
      rows.map((l) => [l.url, l.runId, l.attempts, l.code, l.final]),
      [
        [url, 'run-u', 3, 'HTTP_503', true],
        [url, 'run-u', 2, 'HTTP_503', false],
        [url, 'run-u', 1, 'TIMEOUT', false],
      ],
    );
    assert.deepEqual(await store.logs.get(rows[0]?.id ?? ''), rows[0]);
    assert.deepEqual(
      (await store.logs.ofUrl('run-u', url, 1)).map((l) => l.attempts),
      [3],
    );
    assert.deepEqual(await store.logs.ofUrl('run-u', 'http://127.0.0.1/page/70', 10), []);
    assert.deepEqual(await store.logs.ofUrl('run-none', url, 10), []);
  });

  define(
    'logs: finalOnly lists only final failures; text with NUL or unicode survives',
    async ({ store }) => {
      await store.logs.append(Array.from({ length: 9 }, (_, i) => log('run-f', i)));
      await store.logs.append([
        log('run-f', 100, { final: true, lastError: 'bad\u0000byte 💥 ошибка', url: 'http://例え.jp/ü' }),
      ]);
      const finals = await allPages((after) =>
        store.logs.list('run-f', { finalOnly: true, limit: 2, after }),
      );
      assert.deepEqual(
        finals.items.map((l) => l.at),
        [1_002, 1_005, 1_008, 1_100],
      );
      assert.ok(finals.items.every((l) => l.final));
      const last = finals.items.at(-1);
      assert.equal(last?.lastError, 'bad\uFFFDbyte 💥 ошибка');
      assert.equal(last?.url, 'http://例え.jp/ü');
      assert.equal((await store.logs.list('run-f', { finalOnly: false })).items.length, 10);
    },
  );

  define('logs: a batch with one bad row writes nothing', async ({ store }) => {
    await rejectsWith(
      store.logs.append([log('run-x', 1), log('run-x', 2, { code: 'C'.repeat(101) })]),
      'SQL_INVALID_VALUE',
      { field: 'code' },
    );
    assert.deepEqual((await store.logs.list('run-x')).items, []);
  });

  define('results: upsert is idempotent on captureId, in and across batches', async ({ store }) => {
    await store.results.upsert([result('c1'), result('c2', { status: null, data: AWKWARD_SETTINGS })]);
    await store.results.upsert([result('c1')]);
    await store.results.upsert([
      result('c1', { data: { title: 'second' }, status: 304 }),
      result('c3'),
      result('c3', { data: 'last' }),
    ]);
    const items = (await store.results.list('run-1')).items;
    assert.deepEqual(
      items.map((r) => r.captureId),
      ['c1', 'c2', 'c3'],
    );
    assert.deepEqual(items[0], result('c1', { data: { title: 'second' }, status: 304 }));
    assert.deepEqual(items[1]?.data, AWKWARD_SETTINGS);
    assert.equal(items[1]?.status, null);
    assert.equal(items[2]?.data, 'last');
    await store.results.upsert([]);
  });

  define('results: listed per run by time, paged', async ({ store }) => {
    await store.results.upsert(Array.from({ length: 7 }, (_, i) => result(`k${i}`, { at: 100 - (i % 3) })));
    await store.results.upsert([result('other', { runId: 'run-2' })]);
    const { pages, items } = await allPages((after) => store.results.list('run-1', { limit: 3, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 1],
    );
    assert.deepEqual(
      items.map((r) => r.captureId),
      ['k2', 'k5', 'k1', 'k4', 'k0', 'k3', 'k6'],
    );
    assert.deepEqual(
      (await store.results.list('run-2')).items.map((r) => r.captureId),
      ['other'],
    );
  });
}
