import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAgents } from '../../client/crawler/fetch/agents.js';
import { Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { processTask, type ProcessContext } from '../../client/crawler/page/process-task.js';
import type { FetchSettings, WireTask } from '../../shared/protocol/messages.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { pageRecordSchema, type PageRecord } from '../../shared/protocol/page-record.js';
import { startRedirectSite, type RedirectSite } from '../helpers/redirect-site.js';

const SETTINGS: FetchSettings = {
  userAgent: 'ackcrawl-test',
  connectTimeoutMs: 1_000,
  responseTimeoutMs: 1_000,
  totalTimeoutMs: 2_000,
  maxRedirects: 5,
  maxBodyBytes: 64 * 1024,
  allowPrivate: true,
};

const MOVED_NOTE = '<html><body><a href="/from-the-note">moved</a></body></html>';

/** A site whose redirects carry a "moved" note, an ETag and a type; its page links to /next. */
function site(routes: () => Record<string, string | null>): Promise<RedirectSite> {
  return startRedirectSite(routes, {
    page: '<a href="/next">next</a>',
    redirect: (res, location) =>
      res.writeHead(302, { location, 'content-type': 'text/html', etag: '"e1"' }).end(MOVED_NOTE),
  });
}

/**
 * A page's redirect to another host is not followed inside its task: the record is the 3xx, and
 * its Location is the page's one link, so the target reaches its host through the scheduler (scope,
 * dedup, robots.txt, that host's politeness). A seed's is followed, as before.
 */
describe('a redirect to another host', () => {
  // Two ports of 127.0.0.1 are two hosts (host keys differ), as two names would be.
  let a: RedirectSite;
  let b: RedirectSite;
  const fetcher = new Fetcher(SETTINGS, createAgents({ allowPrivate: true }));

  before(async () => {
    b = await site(() => ({ '/target': null }));
    a = await site(() => ({
      '/moved': `${b.origin}/target`,
      '/hop': '/hop-2',
      '/hop-2': `${b.origin}/target`,
      '/to-ftp': 'ftp://127.0.0.1/file',
      '/too-long': `${b.origin}/${'x'.repeat(300)}`,
      '/home': null,
    }));
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  const run = async (
    path: string,
    task: Partial<WireTask> = {},
    ctx: Partial<ProcessContext> = {},
  ): Promise<{ record: PageRecord; follow: string[]; validators: unknown }> => {
    const frame = await processTask(
      {
        taskId: 't1',
        url: `${a.origin}${path}`,
        depth: 1,
        attempt: 1,
        parentUrl: `${a.origin}/`,
        ...task,
      },
      { fetcher, crawlerId: 'test', ...ctx },
    );
    const { header, record } = decodeOutcomeFrame(frame);
    return {
      record: pageRecordSchema.parse(JSON.parse(record.toString('utf8'))),
      follow: header.links,
      validators: header.validators,
    };
  };

  test("a found page's ends its fetch: the record is the 302 and the Location its one link", async () => {
    const before_ = b.arrivals.length;
    const { record, follow, validators } = await run('/moved');
    assert.equal(b.arrivals.length, before_, 'the other host got no request');
    assert.equal(record.outcome, 'ok');
    assert.equal(record.error, null);
    assert.equal(record.status, 302);
    assert.equal(record.finalUrl, `${a.origin}/moved`);
    assert.deepEqual(record.redirects, []);
    assert.equal(record.headers['location'], `${b.origin}/target`);
    assert.deepEqual(record.links, [`${b.origin}/target`]);
    assert.deepEqual(follow, [`${b.origin}/target`], "queued through the scheduler, as a page's links are");
    // The note in the 302's body is kept as fetched, but it is not the page: not parsed for links.
    assert.equal(record.body, MOVED_NOTE);
    assert.ok(!record.links.some((l) => l.endsWith('/from-the-note')));
    assert.equal(validators, undefined, 'no recrawl validators for a redirect');
  });

  test('same-host hops are followed first; the fetch stops at the one that leaves the host', async () => {
    const { record, follow } = await run('/hop');
    assert.equal(record.status, 302);
    assert.equal(record.finalUrl, `${a.origin}/hop-2`);
    assert.deepEqual(record.redirects, [`${a.origin}/hop-2`]);
    assert.deepEqual(follow, [`${b.origin}/target`]);
  });

  test('a seed (no parent) follows it inside its task, as the site the user named', async () => {
    const before_ = b.arrivals.length;
    const { record, follow } = await run('/moved', { depth: 0, parentUrl: null });
    assert.equal(b.arrivals.length, before_ + 1, 'the other host was fetched once');
    assert.equal(record.status, 200);
    assert.equal(record.finalUrl, `${b.origin}/target`);
    assert.deepEqual(follow, [`${b.origin}/next`]);
  });

  test('a sitemap follows it inside its task', async () => {
    const { record } = await run('/moved', { kind: 'sitemap' });
    assert.equal(record.finalUrl, `${b.origin}/target`);
  });

  test('a Location that is not http(s) fails as before', async () => {
    const { record } = await run('/to-ftp');
    assert.equal(record.outcome, 'failed');
    assert.equal(record.error?.code, 'UNSUPPORTED_REDIRECT');
  });

  test("a target over the crawl's URL length is dropped and counted, as a page's long links are", async () => {
    const { record, follow } = await run('/too-long', {}, { linkLimits: { maxUrlLength: 100 } });
    assert.equal(record.outcome, 'ok');
    assert.equal(record.status, 302);
    assert.deepEqual(follow, []);
    assert.deepEqual(record.linksDropped, { tooLong: 1, overLimit: 0 });
  });

  test('a page on its own host is fetched as ever', async () => {
    const { record, follow } = await run('/home');
    assert.equal(record.status, 200);
    assert.deepEqual(follow, [`${a.origin}/next`]);
  });
});
