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
 * A site that greets a visitor with a session cookie on its home page and answers its other pages
 * only to a visitor that sends it back (403 otherwise), as sites behind a login or a consent wall
 * do; its home page links another host, which must never see the cookie.
 */
describe('ackcrawl crawl --session-cookies: a host sees one visitor across its pages', () => {
  let site: Site;
  let other: Site;
  const outs: string[] = [];

  before(async () => {
    other = await listen('127.0.0.2', (_req, res) => page(res, []));
    site = await listen('127.0.0.1', (req, res) => {
      if (req.url === '/robots.txt') {
        res.writeHead(404).end();
      } else if (req.url === '/') {
        page(res, ['/a', '/b', `${other.origin}/elsewhere`], { 'set-cookie': 'sid=s1; Path=/; HttpOnly' });
      } else if (!/(^|; )sid=s1(;|$)/.test(req.headers.cookie ?? '')) {
        res.writeHead(403, { 'content-type': 'text/plain' }).end('no session');
      } else if (req.url === '/a') {
        page(res, ['/c'], { 'set-cookie': 'step=2; Path=/' });
      } else if (req.url === '/c') {
        // The step cookie /a set came along too.
        if (!/(^|; )step=2(;|$)/.test(req.headers.cookie ?? '')) res.writeHead(409).end();
        else page(res, []);
      } else page(res, []);
    });
  });
  after(async () => {
    await site.close();
    await other.close();
    for (const dir of outs) rmSync(dir, { recursive: true, force: true });
  });

  const crawl = async (extra: string[]) => {
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-session-'));
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
    assert.equal(result.code, 0, result.stderr);
    const statusOf = new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r.status]));
    return statusOf;
  };

  test('without it each page is a new visitor: the pages behind the session answer 403', async () => {
    const status = await crawl([]);
    assert.equal(status.get('/'), 200);
    assert.equal(status.get('/a'), 403);
    assert.equal(status.get('/b'), 403);
    assert.ok(
      site.seen.every((r) => (r.headers.cookie ?? '') === ''),
      'no request carried a cookie',
    );
  });

  test('with it the pages get the cookies the host set, and no other host gets them', async () => {
    const status = await crawl(['--session-cookies']);
    assert.deepEqual([...status].sort(), [
      ['/', 200],
      ['/a', 200],
      ['/b', 200],
      ['/c', 200],
      ['/elsewhere', 200],
    ]);
    const cookieOf = new Map(site.seen.map((r) => [r.path, r.headers.cookie ?? '']));
    assert.equal(cookieOf.get('/'), '', 'the first visit brings none');
    assert.equal(cookieOf.get('/b'), 'sid=s1');
    assert.match(cookieOf.get('/c') ?? '', /sid=s1/);
    assert.ok(other.seen.some((r) => r.path === '/elsewhere'));
    assert.ok(
      other.seen.every((r) => (r.headers.cookie ?? '') === ''),
      `the other host never got a cookie: ${JSON.stringify(other.seen)}`,
    );
  });
});
