import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_MAX_LINKS_PER_PAGE } from '../../shared/protocol/link-limits.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { HOSTILE_EXPECTED, startHostileServer, type HostileServer } from '../fixtures/hostile-server.js';
import { runCli } from '../helpers/cli.js';
import { GUARD_MARK } from '../helpers/loopback-guard.js';
import { countByUrl, readRecords } from '../helpers/records.js';

const MAX_BODY = 1024 * 1024;
const PROCESSES = 2;
const DEADLINE_MS = 60_000;
const GUARD = pathToFileURL(join(import.meta.dirname, '../helpers/loopback-guard-preload.js')).href;

/**
 * Every hostile server at once, through the real embedded crawl (scheduler, agent, two crawler
 * processes): each URL ends as one record with its documented outcome and code, the crawl exits
 * 0 well inside its deadline, and no crawler process dies on the way.
 */
describe('ackcrawl crawl, embedded, against hostile servers', () => {
  let server: HostileServer;
  let out: string;
  let result: Awaited<ReturnType<typeof runCli>>;
  let elapsedMs: number;
  let byPath: Map<string, PageRecord>;
  const urlOf = (path: string): string =>
    `${path.startsWith('/raw/') ? server.rawOrigin : server.origin}${path}`;

  before(async () => {
    server = await startHostileServer({
      bigBytes: 4 * MAX_BODY,
      bombBytes: 64 * MAX_BODY,
      manyLinks: 20_000,
    });
    out = mkdtempSync(join(tmpdir(), 'ackcrawl-hostile-'));
    const seeds = Object.keys(HOSTILE_EXPECTED).map(urlOf);
    const started = Date.now();
    result = await runCli(
      [
        'crawl',
        ...seeds,
        '--out',
        out,
        // Seeds only: links found on the pages are recorded, not fetched.
        '--max-pages',
        String(seeds.length),
        '--processes',
        String(PROCESSES),
        '--host-delay',
        '0',
        '--host-concurrency',
        '16',
        '--retry-delay',
        '100',
        '--json',
      ],
      {
        // Private addresses stay refused; only the fixture's own address is let through.
        ACKCRAWL_ALLOW_ADDRESSES: '127.0.0.1',
        ACKCRAWL_CONNECT_TIMEOUT_MS: '1000',
        ACKCRAWL_RESPONSE_TIMEOUT_MS: '1500',
        ACKCRAWL_TOTAL_TIMEOUT_MS: '3000',
        ACKCRAWL_MAX_BODY_BYTES: String(MAX_BODY),
        // Every role's process refuses connections beyond loopback, whatever the crawler's filter does.
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${GUARD}`.trim(),
      },
      DEADLINE_MS,
    );
    elapsedMs = Date.now() - started;
    const records = readRecords(out);
    byPath = new Map(
      records.map((r) => {
        const u = new URL(r.url);
        return [u.pathname, r];
      }),
    );
  });
  after(async () => {
    await server.close();
    rmSync(out, { recursive: true, force: true });
  });

  test('exits 0 within the deadline, without leaving loopback', () => {
    assert.equal(result.code, 0, result.stderr);
    assert.ok(elapsedMs < DEADLINE_MS, `${elapsedMs} ms`);
    assert.ok(!result.stderr.includes(GUARD_MARK), 'no connection beyond loopback was attempted');
    assert.ok(!server.requests.includes('/canary'), 'no redirect reached a blocked address');
  });

  test('every hostile URL has exactly one record, with its outcome, code and final attempt', () => {
    const counts = countByUrl(readRecords(out));
    assert.deepEqual(
      [...counts.keys()].sort(),
      Object.keys(HOSTILE_EXPECTED)
        .map((p) => new URL(urlOf(p)).href)
        .sort(),
    );
    for (const [url, n] of counts) assert.equal(n, 1, `${url} recorded ${n} times`);
    for (const [path, want] of Object.entries(HOSTILE_EXPECTED)) {
      const record = byPath.get(path);
      assert.ok(record, path);
      assert.equal(record.outcome, want.outcome, `${path}: ${JSON.stringify(record.error)}`);
      assert.equal(record.error?.code ?? null, want.code, `${path}: ${record.error?.message ?? ''}`);
      assert.equal(record.attempt, want.attempt, path);
      assert.ok(pageRecordSchema.safeParse(record).success, `${path} matches the record schema`);
    }
  });

  test('retried cases were tried maxAttempts times, final ones once', () => {
    const tries = (path: string): number =>
      (path.startsWith('/raw/') ? server.rawRequests : server.requests).filter((p) => p === path).length;
    // A loop revisits its own path within one attempt: 1 request + 10 redirects, once.
    const perAttempt: Record<string, number> = { '/loop': 11, '/loop-a': 6 };
    for (const [path, want] of Object.entries(HOSTILE_EXPECTED)) {
      const expected = want.attempt * (perAttempt[path] ?? 1);
      if (path === '/reset-always') {
        // A reset on a kept-alive socket may be a stale socket: the first attempt may send the
        // request once more on a fresh one; after that first reset, one request per attempt.
        assert.ok(
          tries(path) >= expected && tries(path) <= expected + 1,
          `${path} requested ${tries(path)} times`,
        );
        continue;
      }
      assert.equal(tries(path), expected, `${path} requested ${tries(path)} times`);
    }
  });

  test('no crawler process died: records come from at most the starting processes, no restart logged', () => {
    const crawlers = new Set([...byPath.values()].map((r) => r.crawlerId));
    assert.ok(crawlers.size >= 1 && crawlers.size <= PROCESSES, [...crawlers].join(', '));
    assert.doesNotMatch(result.stderr, /crawler exited|keeps crashing/);
  });

  test('memory stayed bounded: the endless body was abandoned near the cap', () => {
    assert.ok(server.endlessBytesSent() < MAX_BODY + 16 * 1024 * 1024, `${server.endlessBytesSent()} bytes`);
  });

  test('pathological but valid pages are ok records with their links', () => {
    assert.deepEqual(byPath.get('/deep')?.links, [urlOf('/found-at-the-bottom')]);
    const badUtf8 = byPath.get('/bad-utf8');
    assert.equal(badUtf8?.bodyEncoding, 'utf8');
    assert.match(badUtf8?.body ?? '', /caf\uFFFD/);
    assert.deepEqual(badUtf8?.links, [urlOf('/after-bad-bytes')]);
    const many = byPath.get('/many-links');
    assert.equal(many?.links.length, DEFAULT_MAX_LINKS_PER_PAGE, 'links over the per-page limit are dropped');
    assert.equal(many?.linksDropped?.overLimit, 20_000 - DEFAULT_MAX_LINKS_PER_PAGE, 'and counted');
  });
});
