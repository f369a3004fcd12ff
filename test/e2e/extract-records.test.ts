import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { segmentName, listSegments } from '../../shared/adapters/page-sink/segments.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { loadConfig } from '../../shared/config/load.js';
import { silentLogger } from '../../shared/logger.js';
import type { ResultRow, SqlStore } from '../../shared/ports/sql-store.js';
import { extractConfigSchema } from '../../master/extract/config.js';
import { startExtract } from '../../master/extract/run-extract.js';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';
import { waitFor } from '../helpers/wait-for.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/fixture-site.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-extract-'));

async function allResults(store: SqlStore, runId: string): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  let after: string | null = null;
  do {
    const page = await store.results.list(runId, { limit: 500, after });
    rows.push(...page.items);
    after = page.next;
  } while (after !== null);
  return rows;
}

/**
 * `ackcrawl extract --records` on the output of a real embedded crawl of the fixture site, with
 * a poison segment added after it: every HTML page gets one row, what cannot be cleaned is
 * logged with a reason, and reading again (with or without the position file) adds nothing.
 */
describe('ackcrawl extract --records, on an embedded crawl', () => {
  let site: FixtureSite;
  let out: string;
  let work: string;
  let sqlUrl: string;
  let htmlCaptures: Set<string>;
  let runId: string;

  before(async () => {
    site = await startFixtureSite();
    out = tmp();
    work = tmp();
    sqlUrl = `sqlite:${join(work, 'results.db')}`;
    const crawl = await runCli(
      [
        'crawl',
        site.url,
        '--out',
        out,
        '--allow-private',
        '--host-delay',
        '0',
        '--retry-delay',
        '100',
        '--json',
      ],
      { ACKCRAWL_RESPONSE_TIMEOUT_MS: '800', ACKCRAWL_TOTAL_TIMEOUT_MS: '1500' },
    );
    assert.equal(crawl.code, 0, crawl.stderr);
    const records = readRecords(out);
    const html = records.filter(
      (r) => r.outcome === 'ok' && r.bodyEncoding === 'utf8' && /html/.test(r.contentType ?? ''),
    );
    htmlCaptures = new Set(html.map((r) => r.captureId));
    runId = html[0]?.runId ?? 'default';
    assert.ok(htmlCaptures.size >= 8, `only ${htmlCaptures.size} HTML pages crawled`);
    // A segment after the crawl's: a line that is no JSON, a record of another schema, and a
    // torn last line (a write in progress), which is not a record yet.
    const last = listSegments(out).at(-1)?.index ?? 0;
    writeFileSync(
      join(out, segmentName(last + 1, false)),
      '{"schema": "ackcrawl.page/3", "url": \n{"schema":"ackcrawl.page/0","captureId":"old-1"}\n{"torn":',
    );
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  test('one row per HTML capture; the image and the poison lines are logged with reasons', async () => {
    const run = await runCli(['extract', '--records', out, '--once'], {
      ACKCRAWL_SQL_URL: sqlUrl,
      ACKCRAWL_EXTRACT_BLOB_STORE: 'false',
      ACKCRAWL_LOG_LEVEL: 'warn',
    });
    assert.equal(run.code, 0, run.stderr);
    const store = await openSqlStore(sqlUrl);
    try {
      const rows = await allResults(store, runId);
      assert.deepEqual(new Set(rows.map((r) => r.captureId)), htmlCaptures);
      assert.equal(rows.length, htmlCaptures.size);
      const home = rows.find((r) => r.url === `${site.url}/` || r.url === site.url);
      assert.ok(home?.fetchedAt && home.fetchedAt > 0, 'fetched time from the record');
      const failures = (await store.extractFailures.list({ limit: 500 })).items;
      const codes = failures.map((f) => f.code).sort();
      assert.deepEqual(codes, ['EXTRACT_BAD_RECORD', 'EXTRACT_BAD_RECORD', 'EXTRACT_BINARY_BODY']);
      assert.ok(failures.some((f) => f.code === 'EXTRACT_BINARY_BODY' && f.url?.endsWith('/image.png')));
      assert.ok(
        failures.some((f) => f.captureId === 'old-1'),
        'ids kept from a record of another schema',
      );
      assert.match(run.stderr, /record not cleaned; skipped/, 'each failure is logged too');
    } finally {
      await store.close();
    }
    assert.ok(existsSync(join(out, '.extract-position.json')));
  });

  test('read again, from the position or from the start: no row is added', async () => {
    const env = {
      ACKCRAWL_SQL_URL: sqlUrl,
      ACKCRAWL_EXTRACT_BLOB_STORE: 'false',
      ACKCRAWL_LOG_LEVEL: 'error',
    };
    assert.equal((await runCli(['extract', '--records', out, '--once'], env)).code, 0);
    rmSync(join(out, '.extract-position.json'));
    assert.equal((await runCli(['extract', '--records', out, '--once'], env)).code, 0);
    const store = await openSqlStore(sqlUrl);
    try {
      assert.equal((await allResults(store, runId)).length, htmlCaptures.size);
      assert.equal((await store.extractFailures.list({ limit: 500 })).items.length, 3);
    } finally {
      await store.close();
    }
  });

  test('stopped after its first chunk and started again, it goes on where it stopped', async () => {
    const db = `sqlite:${join(work, 'resume.db')}`;
    const positionFile = join(work, 'resume-position.json');
    const config = loadConfig(
      extractConfigSchema,
      {},
      {
        sqlUrl: db,
        extractBlobStore: false,
        extractRecordsDir: out,
        extractPositionFile: positionFile,
        extractChunkRecords: 2,
        extractFollow: false,
      },
    );
    const store = await openSqlStore(db);
    try {
      // The second chunk's commit waits until close() was called: the reader stops after it.
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let upserts = 0;
      const holding: SqlStore = Object.create(store) as SqlStore;
      Object.defineProperty(holding, 'results', {
        value: {
          ...store.results,
          upsert: async (rows: readonly ResultRow[]) => {
            upserts += 1;
            if (upserts === 2) await held;
            return store.results.upsert(rows);
          },
        },
      });
      const first = await startExtract(config, { logger: silentLogger(), store: holding });
      await waitFor(() => upserts === 2, { message: 'the second chunk' });
      const closed = first.close();
      release();
      await closed;
      const partial = (await allResults(store, runId)).length;
      assert.ok(partial < htmlCaptures.size, `the first run read everything (${partial})`);
      const second = await startExtract(config, { logger: silentLogger(), store });
      await second.done;
      await second.close();
      assert.equal((await allResults(store, runId)).length, htmlCaptures.size);
      assert.ok(
        second.cleaner.counts.results + partial <= htmlCaptures.size + 2,
        'read again at most one chunk',
      );
    } finally {
      await store.close();
    }
    assert.ok(existsSync(positionFile));
  });
});
