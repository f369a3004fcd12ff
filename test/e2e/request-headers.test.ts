import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';
import {
  linksPage as page,
  startRecordingSite as listen,
  type RecordingSite as Site,
} from '../helpers/recording-site.js';

/**
 * A site that answers only requests carrying its API key (401 otherwise), robots.txt included, as
 * sites behind a gateway do; one of its pages redirects to another host, and its home page links
 * that host: the key must reach the site on every request and the other host on none.
 */
describe('ackcrawl crawl --header: a crawl sends its own headers, each only where it is meant to go', () => {
  let site: Site;
  let other: Site;
  const outs: string[] = [];

  before(async () => {
    other = await listen('127.0.0.2', (req, res) => {
      if (req.url === '/robots.txt') res.writeHead(404).end();
      else page(res, []);
    });
    site = await listen('127.0.0.1', (req, res) => {
      if (req.headers['x-api-key'] !== 'k-123') {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('no key');
      } else if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n');
      } else if (req.url === '/') {
        page(res, ['/a', '/b', '/private', '/away', `${other.origin}/linked`]);
      } else if (req.url === '/away') {
        res.writeHead(302, { location: `${other.origin}/landed` }).end();
      } else page(res, []);
    });
  });
  after(async () => {
    await site.close();
    await other.close();
    for (const dir of outs) rmSync(dir, { recursive: true, force: true });
  });

  const crawl = async (extra: string[]) => {
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-headers-'));
    outs.push(out);
    site.seen.length = 0;
    other.seen.length = 0;
    const result = await runCli([
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--scope',
      'any',
      '--host-delay',
      '0',
      '--max-attempts',
      '1',
      '--json',
      ...extra,
    ]);
    return { result, status: new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r.status])) };
  };

  test('without the key the site answers 401', async () => {
    const { result, status } = await crawl([]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(status.get('/'), 401);
  });

  test("with it every request to the site carries it, robots.txt included, and the other host's none", async () => {
    const { result, status } = await crawl([
      '--header',
      `${site.host} X-Api-Key: k-123`,
      '--header',
      'Accept-Language: de-CH',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual([...status].sort(), [
      ['/', 200],
      ['/a', 200],
      ['/away', 302],
      ['/b', 200],
      ['/landed', 200],
      ['/linked', 200],
      ['/private', null],
    ]);
    assert.ok(site.seen.some((r) => r.path === '/robots.txt'));
    for (const request of site.seen) {
      assert.equal(request.headers['x-api-key'], 'k-123', request.path);
      assert.equal(request.headers['accept-language'], 'de-CH', request.path);
    }
    assert.ok(other.seen.length >= 2, 'the other host was fetched');
    for (const request of other.seen) {
      assert.equal(request.headers['x-api-key'], undefined, request.path);
      assert.equal(request.headers['accept-language'], 'de-CH', `${request.path}: a header for every host`);
    }
  });

  test('a header the crawler sets itself is refused before anything is fetched, with what to use instead', async () => {
    const { result } = await crawl(['--header', 'User-Agent: other']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /User-Agent cannot be set: use userAgent/);
    assert.equal(site.seen.length, 0);
  });

  test('a line that is no header is refused, its value kept out of the message', async () => {
    const { result } = await crawl(['--header', 'X-Api-Key k-123']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /BAD_HEADER|Name: value/);
    assert.doesNotMatch(result.stderr, /k-123/);
  });
});

/**
 * A site behind a login: every request, robots.txt included, must bring the session cookie a
 * browser got at the login (401 otherwise); its home page links another host, which must never see
 * the cookie.
 */
describe('ackcrawl crawl --cookie: a crawl starts logged in, on the site the cookie is for', () => {
  let site: Site;
  let other: Site;
  const outs: string[] = [];

  before(async () => {
    other = await listen('127.0.0.2', (_req, res) => page(res, []));
    site = await listen('127.0.0.1', (req, res) => {
      if (!/(^|; )sid=logged-in(;|$)/.test(req.headers.cookie ?? '')) res.writeHead(401).end();
      else if (req.url === '/robots.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('');
      else if (req.url === '/') page(res, ['/a', `${other.origin}/linked`]);
      else page(res, []);
    });
  });
  after(async () => {
    await site.close();
    await other.close();
    for (const dir of outs) rmSync(dir, { recursive: true, force: true });
  });

  test('every request to the site carries it; the other host gets none', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-cookie-'));
    outs.push(out);
    const result = await runCli([
      'crawl',
      `${site.origin}/`,
      '--out',
      out,
      '--allow-private',
      '--scope',
      'any',
      '--host-delay',
      '0',
      '--max-attempts',
      '1',
      '--cookie',
      '127.0.0.1 sid=logged-in',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr + result.stdout, /logged-in/, 'never printed');
    const status = new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r.status]));
    assert.deepEqual([...status].sort(), [
      ['/', 200],
      ['/a', 200],
      ['/linked', 200],
    ]);
    assert.ok(site.seen.some((r) => r.path === '/robots.txt'));
    for (const request of site.seen) assert.equal(request.headers.cookie, 'sid=logged-in', request.path);
    assert.ok(other.seen.length > 0);
    for (const request of other.seen) assert.equal(request.headers.cookie, undefined, request.path);
  });
});
