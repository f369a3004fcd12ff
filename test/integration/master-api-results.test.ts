import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ResultRow } from '../../shared/ports/sql-store.js';
import { runCli } from '../helpers/cli.js';
import { assertError, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';
import { result } from '../contract/sql-store/logs-results.cases.js';

/** A minimal RFC 4180 reader for the test: quoted fields, doubled quotes, CRLF or LF row ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

describe("master API: a run's results", () => {
  let master: TestMaster;
  let runId: string;
  let otherRunId: string;
  let reader: string;
  const dirs: string[] = [];
  const rows: ResultRow[] = [];

  before(async () => {
    master = await startTestMaster();
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody({ name: 'results' }) });
    runId = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id;
    otherRunId = (await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`)).json.id;
    reader = (await master.call('POST', '/api/v1/tokens', { body: { name: 'r', scopes: ['read'] } })).json
      .secret;
    // More than one export page (500), written in two batches at two times.
    for (let i = 0; i < 1_203; i++) {
      rows.push(
        result(`cap-${String(i).padStart(5, '0')}`, {
          runId,
          jobId: job.json.id,
          at: 1_000 + Math.floor(i / 600),
          title: `Page ${i}`,
          language: 'en',
          mainText: `text of page ${i}`,
          publishedAt: Date.UTC(2026, 0, 1),
          fetchedAt: Date.UTC(2026, 11, 1),
          data: { words: i, siteName: 'Site' },
        }),
      );
    }
    // The web writes what it likes: a formula, commas, quotes, a line break.
    rows[1] = {
      ...(rows[1] as ResultRow),
      title: '=HYPERLINK("http://evil.test","click")',
      description: 'one, "two"\nthree',
    };
    await master.store.results.upsert(rows.slice(0, 600));
    await master.store.results.upsert(rows.slice(600));
    await master.store.results.upsert([result('other-run', { runId: otherRunId, jobId: job.json.id })]);
  });
  after(async () => {
    await master.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('GET /runs/{id}/results pages through the run’s results, its text only when asked for', async () => {
    const first = await master.call('GET', `/api/v1/runs/${runId}/results?limit=2`, { token: reader });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.json.items[0], {
      captureId: 'cap-00000',
      url: 'http://127.0.0.1/cap-00000',
      status: 200,
      title: 'Page 0',
      author: null,
      publishedAt: '2026-01-01T00:00:00.000Z',
      language: 'en',
      description: null,
      canonicalUrl: null,
      fetchedAt: '2026-12-01T00:00:00.000Z',
      at: new Date(1_000).toISOString(),
      data: { words: 0, siteName: 'Site' },
    });
    assert.equal(first.json.items.length, 2);
    assert.ok(first.json.next);
    const second = await master.call(
      'GET',
      `/api/v1/runs/${runId}/results?limit=2&text=true&after=${encodeURIComponent(first.json.next)}`,
    );
    assert.deepEqual(
      second.json.items.map((r: { captureId: string; mainText: string }) => [r.captureId, r.mainText]),
      [
        ['cap-00002', 'text of page 2'],
        ['cap-00003', 'text of page 3'],
      ],
    );
    const other = await master.call('GET', `/api/v1/runs/${otherRunId}/results`);
    assert.deepEqual(
      other.json.items.map((r: { captureId: string }) => r.captureId),
      ['other-run'],
    );
  });

  test('unknown runs are 404, a bad query 400, no token 401', async () => {
    assertError(await master.call('GET', '/api/v1/runs/nope/results'), 404, 'RUN_NOT_FOUND');
    assertError(await master.call('GET', '/api/v1/runs/nope/results/export'), 404, 'RUN_NOT_FOUND');
    assertError(
      await master.call('GET', `/api/v1/runs/${runId}/results/export?format=xml`),
      400,
      'INVALID_REQUEST',
    );
    assertError(await master.call('GET', `/api/v1/runs/${runId}/results?text=yes`), 400, 'INVALID_REQUEST');
    assert.equal((await master.call('GET', `/api/v1/runs/${runId}/results`, { token: null })).status, 401);
  });

  test('the JSON Lines export has every result once, in order, as the list gives it with its text', async () => {
    const answer = await master.call('GET', `/api/v1/runs/${runId}/results/export`, { token: reader });
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^application\/x-ndjson/);
    assert.equal(answer.headers['content-disposition'], `attachment; filename="run-${runId}-results.jsonl"`);
    const lines = answer.text.split('\n');
    assert.equal(lines.pop(), '', 'ends with a line break');
    const exported = lines.map(
      (line) => JSON.parse(line) as { captureId: string; mainText: string; title: string },
    );
    assert.deepEqual(
      exported.map((r) => r.captureId),
      rows.map((r) => r.captureId),
    );
    assert.equal(exported[5]?.mainText, 'text of page 5');
    assert.equal(
      exported[1]?.title,
      '=HYPERLINK("http://evil.test","click")',
      'JSON keeps the text as it is',
    );
    const withoutText = await master.call('GET', `/api/v1/runs/${runId}/results/export?text=false`);
    assert.ok(!withoutText.text.includes('mainText'));
  });

  test('the CSV export: a header, one row each, quoted where needed, formulas defused', async () => {
    const answer = await master.call('GET', `/api/v1/runs/${runId}/results/export?format=csv`, {
      token: reader,
    });
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^text\/csv/);
    const table = parseCsv(answer.text);
    assert.deepEqual(table[0], [
      'capture_id',
      'url',
      'status',
      'title',
      'author',
      'published_at',
      'language',
      'description',
      'canonical_url',
      'fetched_at',
      'at',
      'data',
      'main_text',
    ]);
    assert.equal(table.length, 1 + rows.length);
    assert.deepEqual(table[1], [
      'cap-00000',
      'http://127.0.0.1/cap-00000',
      '200',
      'Page 0',
      '',
      '2026-01-01T00:00:00.000Z',
      'en',
      '',
      '',
      '2026-12-01T00:00:00.000Z',
      new Date(1_000).toISOString(),
      '{"words":0,"siteName":"Site"}',
      'text of page 0',
    ]);
    const hostile = table[2] ?? [];
    assert.equal(hostile[3], '\'=HYPERLINK("http://evil.test","click")', 'a spreadsheet reads it as text');
    assert.equal(hostile[7], 'one, "two"\nthree');
  });

  test('ackcrawl jobs results writes the export to a file or to stdout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-results-'));
    dirs.push(dir);
    const env = { ACKCRAWL_MASTER_URL: master.url, ACKCRAWL_TOKEN: reader };
    const file = join(dir, 'out.csv');
    const saved = await runCli(
      ['jobs', 'results', runId, '--format', 'csv', '--no-text', '--out', file],
      env,
      30_000,
    );
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(saved.stdout, /wrote run .* results to .*out\.csv \(\d+ bytes\)/);
    const table = parseCsv(readFileSync(file, 'utf8'));
    assert.equal(table.length, 1 + rows.length);
    assert.equal(table[0]?.includes('main_text'), false);

    const printed = await runCli(['jobs', 'results', otherRunId], env, 30_000);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(JSON.parse(printed.stdout).captureId, 'other-run');

    const missing = await runCli(['jobs', 'results', 'nope'], env, 30_000);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /404 RUN_NOT_FOUND/);
  });
});
