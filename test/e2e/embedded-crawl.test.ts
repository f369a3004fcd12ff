import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { countByUrl, readRecords } from '../helpers/records.js';
import {
  EXPECTED_FAILED,
  EXPECTED_OK,
  startFixtureSite,
  type FixtureSite,
} from '../fixtures/fixture-site.js';

const FAST = { ACKCRAWL_RESPONSE_TIMEOUT_MS: '800', ACKCRAWL_TOTAL_TIMEOUT_MS: '1500' };
const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-e2e-'));

describe('ackcrawl crawl, embedded, against the fixture site', () => {
  let site: FixtureSite;
  let out: string;
  let cwd: string;
  let result: Awaited<ReturnType<typeof runCli>>;

  before(async () => {
    site = await startFixtureSite();
    out = tmp();
    cwd = tmp();
    result = await runCli(
      [
        'crawl',
        site.url,
        '--out',
        out,
        '--allow-private',
        '--host-delay',
        '0',
        '--host-concurrency',
        '8',
        '--retry-delay',
        '100',
        '--json',
      ],
      FAST,
      120_000,
      cwd,
    );
  });
  after(async () => {
    await site.close();
    rmSync(out, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  });

  test('leaves nothing in the working directory, and only the crawl in --out', () => {
    assert.deepEqual(readdirSync(cwd), []);
    const kept = readdirSync(out).filter((name) => !/^pages-\d+\.jsonl$/.test(name));
    assert.deepEqual(kept.sort(), ['frontier.sqlite', 'recrawl-index.sqlite']);
  });

  test('exits 0 with a JSON summary that adds up', () => {
    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as {
      pages: number;
      ok: number;
      failed: number;
      files: string[];
    };
    assert.equal(summary.ok, EXPECTED_OK.length);
    assert.equal(summary.failed, Object.keys(EXPECTED_FAILED).length);
    assert.equal(summary.pages, summary.ok + summary.failed);
    assert.ok(summary.files.length >= 1);
    // The crawlers stop once the crawl is done, before its scheduler goes: none tries to reach it.
    assert.doesNotMatch(result.stderr, /scheduler connection/);
  });

  test('fetched exactly the expected pages, each recorded once', () => {
    const records = readRecords(out);
    const counts = countByUrl(records);
    const expected = [...EXPECTED_OK, ...Object.keys(EXPECTED_FAILED)].map((p) => site.origin + p).sort();
    assert.deepEqual([...counts.keys()].sort(), expected);
    for (const [url, n] of counts) assert.equal(n, 1, `${url} recorded ${n} times`);
    for (const path of ['/never-rel', '/never-meta', '/outside']) {
      assert.ok(!site.requests.includes(path), `${path} must not be fetched`);
    }
  });

  test('every record matches the documented schema', () => {
    for (const record of readRecords(out)) {
      const parsed = pageRecordSchema.safeParse(record);
      assert.ok(parsed.success, `${record.url}: ${JSON.stringify(parsed.error?.issues[0])}`);
    }
  });

  test('failures carry their code and the attempt they ended on', () => {
    const byPath = new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r]));
    for (const [path, want] of Object.entries(EXPECTED_FAILED)) {
      const record = byPath.get(path);
      assert.ok(record, path);
      assert.equal(record.outcome, 'failed', path);
      assert.equal(record.error?.code, want.code, path);
      assert.equal(record.attempt, want.attempt, path);
    }
    assert.equal(site.requests.filter((p) => p === '/always-500').length, 3, '500 tried three times');
    assert.equal(site.requests.filter((p) => p === '/missing').length, 1, '404 tried once');
    const flaky = byPath.get('/flaky');
    assert.equal(flaky?.outcome, 'ok');
    assert.equal(flaky?.attempt, 2);
  });

  test('records links, redirects, bodies and hashes faithfully', () => {
    const byPath = new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r]));
    const home = byPath.get('/');
    assert.ok(home);
    const o = site.origin;
    assert.deepEqual(home.links.slice(0, 4), [`${o}/a`, `${o}/b`, `${o}/c`, `${o}/dir/`]);
    assert.equal(new Set(home.links).size, home.links.length, 'no repeats');
    assert.ok(
      home.links.every((l) => l.startsWith('http')),
      'no mailto/javascript/tel',
    );
    assert.ok(home.links.includes('http://127.0.0.2:9/outside'), 'out-of-scope links are still recorded');
    assert.equal(home.status, 200);
    assert.match(home.body ?? '', /<a href="\/a">/);
    assert.equal(home.bodyEncoding, 'utf8');
    assert.match(home.bodySha256 ?? '', /^[0-9a-f]{64}$/);
    const redirect = byPath.get('/redirect');
    assert.equal(redirect?.finalUrl, `${o}/final`);
    assert.deepEqual(redirect?.redirects, [`${o}/final`]);
    assert.deepEqual(byPath.get('/dir/')?.links, [`${o}/base/x`]);
    assert.deepEqual(byPath.get('/c')?.nofollowLinks, [`${o}/never-rel`]);
    assert.equal(byPath.get('/nofollow-page')?.nofollow, true);
    const image = byPath.get('/image.png');
    assert.equal(image?.bodyEncoding, 'base64');
    assert.deepEqual(
      Buffer.from(image?.body ?? '', 'base64'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]),
    );
    assert.equal(byPath.get('/big')?.body, null);
  });
});

describe('ackcrawl crawl, refusals and failures', () => {
  test('a seed that is not a URL: clear error, exit 2', async () => {
    const r = await runCli(['crawl', 'not a url', '--out', tmp()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /seed 'not a url'/);
  });

  test('an unsupported scheme: clear error, exit 2', async () => {
    const r = await runCli(['crawl', 'ftp://127.0.0.1/file', '--out', tmp()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /ftp/);
  });

  test('a bad option: clear error, exit 2', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1/', '--host-delay', 'soon', '--out', tmp()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--host-delay/);
  });

  test('an unwritable --out: clear error, exit 2', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1/', '--out', '/proc/ackcrawl-cannot-write']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not a writable folder/);
  });

  test('an unreachable seed is a failed record in a completed crawl (robots.txt unreachable first)', async () => {
    const port = await freePort();
    const out = tmp();
    const r = await runCli([
      'crawl',
      `http://127.0.0.1:${port}/`,
      '--out',
      out,
      '--allow-private',
      '--retry-delay',
      '50',
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const records = readRecords(out);
    assert.equal(records.length, 1);
    assert.equal(records[0]?.outcome, 'failed');
    // Pages of a host wait for its robots.txt; when that keeps failing they go through the retry
    // tiers without being fetched, and end with the robots.txt failure.
    assert.equal(records[0]?.error?.code, 'ROBOTS_UNAVAILABLE');
    assert.match(records[0]?.error?.message ?? '', /CONNECTION_REFUSED/);
    assert.equal(records[0]?.attempt, 3);
    rmSync(out, { recursive: true, force: true });
  });

  test('loopback is refused without --allow-private, checked on the address connected to', async () => {
    const site = await startFixtureSite();
    const out = tmp();
    try {
      // "localhost" resolves to loopback: the name does not get it past the filter.
      const url = site.url.replace('127.0.0.1', 'localhost');
      const r = await runCli(['crawl', url, '--out', out, '--json']);
      assert.equal(r.code, 0, r.stderr);
      const records = readRecords(out);
      assert.equal(records.length, 1);
      assert.equal(records[0]?.error?.code, 'ADDRESS_BLOCKED');
      assert.equal(site.requests.length, 0, 'no request reached the server');
    } finally {
      await site.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
