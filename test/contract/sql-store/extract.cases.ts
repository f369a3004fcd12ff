import assert from 'node:assert/strict';
import type { ExtractFailureRow } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, rejectsWith } from './expect.js';
import { result } from './logs-results.cases.js';

const failure = (source: string, fields: Partial<ExtractFailureRow> = {}): ExtractFailureRow => ({
  source,
  captureId: `cap-${source}`,
  runId: 'run-1',
  url: `http://127.0.0.1/${source}`,
  code: 'EXTRACT_BINARY_BODY',
  reason: 'the body is bytes (base64), not text',
  at: 50,
  ...fields,
});

/** Schema version 5: the cleaner's columns of results, and extract_failures. */
export function extractCases(define: DefineCase): void {
  define('results: the cleaner columns round-trip, long and awkward text included', async ({ store }) => {
    const mainText = `${'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. 中文 🙂 '.repeat(4_000)}end`;
    const full = result('clean-1', {
      title: "Ein Titel — “quoted” 'single'",
      author: 'Ada Lovelace',
      publishedAt: 1_579_500_318_000,
      language: 'de',
      description: 'line one\nline two',
      canonicalUrl: 'https://example.com/a?b=c&d=%C3%A9',
      mainText,
      fetchedAt: 1_700_000_000_123,
    });
    await store.results.upsert([full, result('clean-2')]);
    const items = (await store.results.list('run-1')).items;
    assert.deepEqual(items[0], full);
    assert.equal(items[0]?.mainText?.length, mainText.length);
    assert.deepEqual(items[1], result('clean-2'), 'absent metadata stays null');
  });

  define('results: a replayed capture replaces its row, never adds one', async ({ store }) => {
    await store.results.upsert([result('r1', { title: 'first', mainText: 'one' })]);
    await store.results.upsert([result('r1', { title: 'again', mainText: 'two', language: 'en' })]);
    const items = (await store.results.list('run-1')).items;
    assert.equal(items.length, 1);
    assert.equal(items[0]?.title, 'again');
    assert.equal(items[0]?.mainText, 'two');
    assert.equal(items[0]?.language, 'en');
  });

  define('results: NUL in text becomes U+FFFD; an over-long language code is refused', async ({ store }) => {
    await store.results.upsert([result('nul', { mainText: 'a\u0000b', title: '\u0000' })]);
    const [row] = (await store.results.list('run-1')).items;
    assert.equal(row?.mainText, 'a\uFFFDb');
    assert.equal(row?.title, '\uFFFD');
    await rejectsWith(
      store.results.upsert([result('lang', { language: 'x'.repeat(17) })]),
      'SQL_INVALID_VALUE',
    );
    assert.equal((await store.results.list('run-1')).items.length, 1);
  });

  define('extract failures: idempotent on source, listed oldest first, paged', async ({ store }) => {
    await store.extractFailures.record([
      failure('kafka:pages:0:1', { at: 3 }),
      failure('kafka:pages:0:2', {
        at: 1,
        captureId: null,
        runId: null,
        url: null,
        code: 'EXTRACT_BAD_RECORD',
      }),
      failure('file:pages-000001.jsonl:7', { at: 2 }),
    ]);
    await store.extractFailures.record([failure('kafka:pages:0:1', { at: 3, reason: 'read twice' })]);
    await store.extractFailures.record([]);
    const { pages, items } = await allPages((after) => store.extractFailures.list({ limit: 2, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 1],
    );
    assert.deepEqual(
      items.map((f) => f.source),
      ['kafka:pages:0:2', 'file:pages-000001.jsonl:7', 'kafka:pages:0:1'],
    );
    assert.deepEqual(
      items[0],
      failure('kafka:pages:0:2', {
        at: 1,
        captureId: null,
        runId: null,
        url: null,
        code: 'EXTRACT_BAD_RECORD',
      }),
    );
    assert.equal(items[2]?.reason, 'read twice');
  });

  define('extract failures: a source longer than 400 characters is refused before SQL', async ({ store }) => {
    await rejectsWith(store.extractFailures.record([failure('k'.repeat(401))]), 'SQL_INVALID_VALUE', {
      field: 'source',
    });
    assert.equal((await store.extractFailures.list()).items.length, 0);
  });
}
