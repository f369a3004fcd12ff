import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchedPage, Fetcher } from '../../client/crawler/fetch/fetcher.js';
import { processTask } from '../../client/crawler/page/process-task.js';
import { TaskCookies } from '../../client/crawler/fetch/task-cookies.js';
import {
  base64Length,
  FRAME_METADATA_BUDGET_BYTES,
  outcomeFrameLimit,
} from '../../shared/protocol/frame-limits.js';
import { decodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';

const URL_ = 'https://site.example/page';

function fetcherOf(contentType: string, body: Buffer): Fetcher {
  const page: FetchedPage = {
    status: 200,
    finalUrl: URL_,
    redirects: [],
    headers: { 'content-type': contentType },
    contentType,
    body,
  };
  return { fetch: () => Promise.resolve(page) } as unknown as Fetcher;
}

async function frameOf(contentType: string, body: Buffer, maxFrameBytes: number) {
  const frame = await processTask(
    { taskId: 't1', url: URL_, depth: 0, attempt: 1, parentUrl: null },
    { fetcher: fetcherOf(contentType, body), crawlerId: 'test', maxFrameBytes },
  );
  const { header, record } = decodeOutcomeFrame(frame);
  return { frame, header, record: pageRecordSchema.parse(JSON.parse(record.toString('utf8'))) };
}

describe('outcome frames fit the scheduler’s limit', () => {
  test('the limit: base64 of the largest body plus the metadata budget, far below 6× the body', () => {
    const limit = outcomeFrameLimit({ maxBodyBytes: 10 * 1024 * 1024, sitemapMaxBytes: 50 * 1024 * 1024 });
    assert.equal(limit, base64Length(50 * 1024 * 1024) + FRAME_METADATA_BUDGET_BYTES);
    assert.ok(limit < 100 * 1024 * 1024, `${limit} bytes`);
    assert.equal(
      outcomeFrameLimit({ maxBodyBytes: 3 }),
      base64Length(50 * 1024 * 1024) + FRAME_METADATA_BUDGET_BYTES,
    );
  });

  test('a text body whose JSON escaping would not fit goes as base64 of its exact bytes', async () => {
    // Control characters: six bytes each in JSON, 4/3 in base64.
    const body = Buffer.alloc(30_000, 0x01);
    const { frame, header, record } = await frameOf('text/plain; charset=utf-8', body, 60_000);
    assert.ok(frame.length <= 60_000, `${frame.length} bytes`);
    assert.equal(header.outcome, 'ok');
    assert.equal(record.bodyEncoding, 'base64');
    assert.equal(record.charset, null);
    assert.deepEqual(Buffer.from(record.body ?? '', 'base64'), body);
  });

  test('a text body that fits stays text', async () => {
    const { record } = await frameOf('text/plain; charset=utf-8', Buffer.from('hello'), 60_000);
    assert.equal(record.bodyEncoding, 'utf8');
    assert.equal(record.body, 'hello');
  });

  test('an outcome that cannot fit is a final RECORD_TOO_LARGE failure, small and typed', async () => {
    const { frame, header, record } = await frameOf('application/octet-stream', Buffer.alloc(30_000), 20_000);
    assert.ok(frame.length <= 20_000);
    assert.equal(header.outcome, 'failed');
    assert.equal(header.failure?.code, 'RECORD_TOO_LARGE');
    assert.equal(header.failure?.retriable, false);
    assert.equal(record.outcome, 'failed');
    assert.equal(record.error?.code, 'RECORD_TOO_LARGE');
    assert.equal(record.body, null);
    assert.equal(record.bodyBytes, 30_000, 'the record still says how large the body was');
  });

  test("a session's cookies are left out before the page is", async () => {
    const cookies = new TaskCookies([]);
    for (let i = 0; i < 10; i += 1) await cookies.setCookie(`c${i}=${'v'.repeat(3_000)}`, URL_);
    const page: FetchedPage = {
      status: 200,
      finalUrl: URL_,
      redirects: [],
      headers: { 'content-type': 'text/plain' },
      contentType: 'text/plain',
      body: Buffer.from('x'.repeat(5_000)),
      cookies,
    };
    const fetcher = { fetch: () => Promise.resolve(page) } as unknown as Fetcher;
    const task = { taskId: 't1', url: URL_, depth: 0, attempt: 1, parentUrl: null, cookies: [] };
    const roomy = decodeOutcomeFrame(
      await processTask(task, { fetcher, crawlerId: 'test', maxFrameBytes: 200_000 }),
    );
    assert.equal(roomy.header.cookies?.length, 10, 'with room, the jar goes back');
    const tight = await processTask(task, { fetcher, crawlerId: 'test', maxFrameBytes: 20_000 });
    assert.ok(tight.length <= 20_000, `${tight.length} bytes`);
    const { header, record } = decodeOutcomeFrame(tight);
    assert.equal(header.outcome, 'ok');
    assert.equal(header.cookies, undefined);
    assert.equal(JSON.parse(record.toString('utf8')).body, 'x'.repeat(5_000));
  });
});
