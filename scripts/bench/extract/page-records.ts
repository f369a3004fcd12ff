import { createHash, randomUUID } from 'node:crypto';
import { encodeBody } from '../../../shared/text/body-encoding.js';
import { PAGE_RECORD_SCHEMA, type PageRecord } from '../../../shared/protocol/page-record.js';

export interface SavedPage {
  url: string;
  html: Buffer;
  jobId?: string;
  runId?: string;
  captureId?: string;
  contentType?: string;
}

/**
 * The page record a crawler would write for a saved page fetched with a 200: the body decoded
 * the crawler's way (shared/text/body-encoding.ts), ids as given or new. For the benchmark and
 * the tests of the cleaner, which need records of real pages without a network.
 */
export function pageRecordOf(page: SavedPage): PageRecord {
  const contentType = page.contentType ?? 'text/html';
  const body = encodeBody(page.html, contentType);
  return {
    schema: PAGE_RECORD_SCHEMA,
    jobId: page.jobId ?? 'default',
    runId: page.runId ?? 'default',
    captureId: page.captureId ?? randomUUID(),
    url: page.url,
    finalUrl: page.url,
    status: 200,
    outcome: 'ok',
    error: null,
    contentType,
    depth: 0,
    parentUrl: null,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: { 'content-type': contentType },
    fetchedAt: new Date(1_700_000_000_000).toISOString(),
    durationMs: 12,
    attempt: 1,
    crawlerId: 'bench',
    bodyBytes: page.html.length,
    bodySha256: createHash('sha256').update(page.html).digest('hex'),
    bodyEncoding: body.encoding,
    body: body.body,
    charset: body.charset,
  };
}
