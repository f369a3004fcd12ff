import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchedPage } from '../../client/crawler/fetch/fetcher.js';
import { TaskCookies } from '../../client/crawler/fetch/task-cookies.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { conditionalHeaders, responseValidators } from '../../client/crawler/recrawl/validators.js';
import type { WireTask } from '../../shared/protocol/messages.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { recordKeysOf } from '../helpers/records.js';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';

const ETAG = '"abc-1"';
const MODIFIED = 'Thu, 01 Jan 2026 00:00:00 GMT';

const task = (more: Partial<WireTask> = {}): WireTask => ({
  taskId: 't1',
  url: 'https://example.test/page',
  depth: 1,
  attempt: 1,
  parentUrl: 'https://example.test/',
  jobId: 'job',
  runId: 'run-2',
  captureId: 'capture-2',
  ...more,
});

const page = (status: number, body = ''): FetchedPage => ({
  status,
  finalUrl: 'https://example.test/page',
  redirects: [],
  headers: { etag: ETAG, 'last-modified': MODIFIED, ...(body ? { 'content-type': 'text/html' } : {}) },
  contentType: body ? 'text/html' : null,
  body: Buffer.from(body),
});

/** A fetcher that answers `answer` and remembers the request headers it was given. */
function spyFetcher(answer: FetchedPage) {
  const sent: (Record<string, string> | undefined)[] = [];
  return {
    sent,
    fetch: (_url: string, hooks?: { headers?: Record<string, string> }) => {
      sent.push(hooks?.headers);
      return Promise.resolve(answer);
    },
  };
}

const decode = (frame: Buffer) => {
  const { header, record } = decodeOutcomeFrame(frame);
  return { header, record: pageRecordSchema.parse(JSON.parse(record.toString('utf8'))) };
};

describe('recrawl on the crawler', () => {
  test('a task with validators sends If-None-Match and If-Modified-Since', async () => {
    const fetcher = spyFetcher(page(304));
    await processTask(task({ validators: { etag: ETAG, lastModified: MODIFIED, captureId: 'c1' } }), {
      fetcher,
      crawlerId: 'c',
    });
    assert.deepEqual(fetcher.sent, [{ 'if-none-match': ETAG, 'if-modified-since': MODIFIED }]);
  });

  test('a 304 to them is a not-modified outcome: no body, no links, the confirmed capture named', async () => {
    const frame = await processTask(task({ validators: { etag: ETAG, captureId: 'capture-1' } }), {
      fetcher: spyFetcher(page(304)),
      crawlerId: 'c',
    });
    const { header, record } = decode(frame);
    assert.equal(header.outcome, 'not-modified');
    assert.equal(header.failure, null);
    assert.deepEqual(header.links, []);
    assert.deepEqual(header.validators, { etag: ETAG, lastModified: MODIFIED });
    assert.equal(record.outcome, 'not-modified');
    assert.equal(record.status, 304);
    assert.equal(record.body, null);
    assert.equal(record.bodyBytes, 0);
    assert.equal(record.bodySha256, null);
    assert.equal(record.previousCaptureId, 'capture-1');
    assert.equal(record.captureId, 'capture-2');
    assert.equal(record.runId, 'run-2');
  });

  test("a 304's cookies go back for a run that keeps a session, and only then", async () => {
    const cookies = new TaskCookies([]);
    await cookies.setCookie('sid=renewed; Path=/', 'https://example.test/page');
    const answered = { ...page(304), cookies };
    const validators = { etag: ETAG, captureId: 'capture-1' };
    const session = decode(
      await processTask(task({ validators, cookies: [] }), { fetcher: spyFetcher(answered), crawlerId: 'c' }),
    );
    assert.equal(session.header.outcome, 'not-modified');
    assert.deepEqual(
      session.header.cookies?.map((c) => `${c.name}=${c.value}`),
      ['sid=renewed'],
    );
    const none = decode(
      await processTask(task({ validators }), { fetcher: spyFetcher(answered), crawlerId: 'c' }),
    );
    assert.equal(none.header.cookies, undefined);
  });

  test("a not-modified record's keys come in one order, with no key for what does not apply", async () => {
    const keysOf = async (more: Partial<WireTask>): Promise<string[]> => {
      const frame = await processTask(task({ validators: { etag: ETAG, captureId: 'c1' }, ...more }), {
        fetcher: spyFetcher(page(304)),
        crawlerId: 'c',
      });
      return recordKeysOf(frame);
    };
    const always = `schema jobId runId captureId url finalUrl status outcome error contentType depth parentUrl
      links nofollowLinks nofollow redirects headers fetchedAt durationMs attempt crawlerId
      bodyBytes bodySha256 bodyEncoding body previousCaptureId`.split(/\s+/);
    // Fetched directly (no userAgent or proxy key), no sitemap lastmod unless the task has one.
    assert.deepEqual(await keysOf({}), always);
    assert.deepEqual(await keysOf({ lastmod: '2026-01-02' }), [...always, 'lastmod']);
  });

  test('a 200 despite them is an ordinary page that carries its new validators', async () => {
    const frame = await processTask(task({ validators: { etag: '"old"', captureId: 'capture-1' } }), {
      fetcher: spyFetcher(page(200, '<a href="/next">n</a>')),
      crawlerId: 'c',
    });
    const { header, record } = decode(frame);
    assert.equal(header.outcome, 'ok');
    assert.deepEqual(header.validators, { etag: ETAG, lastModified: MODIFIED });
    assert.deepEqual(header.links, ['https://example.test/next']);
    assert.equal(record.previousCaptureId, undefined);
    assert.ok(record.body?.includes('/next'));
  });

  test('a 304 to a task without validators is still a failure (the server answered nothing we asked)', async () => {
    const { header } = decode(await processTask(task(), { fetcher: spyFetcher(page(304)), crawlerId: 'c' }));
    assert.equal(header.outcome, 'failed');
  });

  test('rendered and sitemap tasks, and validators without values, are fetched in full', () => {
    const v = { etag: ETAG, captureId: 'c1' };
    assert.equal(conditionalHeaders(task({ validators: v, render: true })), null);
    assert.equal(conditionalHeaders(task({ validators: v, kind: 'sitemap' })), null);
    assert.equal(conditionalHeaders(task({ validators: { captureId: 'c1' } })), null);
    assert.deepEqual(conditionalHeaders(task({ validators: v, kind: 'page' })), { 'if-none-match': ETAG });
  });

  test('responseValidators keeps what a response says, and nothing too long or empty', () => {
    assert.equal(responseValidators({}), undefined);
    assert.deepEqual(responseValidators({ etag: ' W/"x" ' }), { etag: 'W/"x"' });
    assert.equal(responseValidators({ etag: 'x'.repeat(2000), 'last-modified': '' }), undefined);
  });
});
