import type { OutcomeHeader, TaskValidators, WireTask } from '../../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../../shared/protocol/outcome-frame.js';
import { PAGE_RECORD_SCHEMA, type PageRecord } from '../../../shared/protocol/page-record.js';
import type { FetchedPage } from '../fetch/fetcher.js';
import type { FetchVia } from '../fetch/routed-fetcher.js';
import { captureOf } from '../page/capture.js';
import { responseValidators } from './validators.js';

export interface NotModifiedFetch {
  task: WireTask;
  validators: TaskValidators;
  page: FetchedPage;
  via: FetchVia | null;
  crawlerId: string;
  fetchedAt: string;
  durationMs: number;
}

/**
 * The outcome of a conditional request answered 304 (page record `/4`): `not-modified`, no body,
 * no links (the scheduler follows those of the confirmed capture), `previousCaptureId` naming the
 * capture whose body still holds. The 304's own validators go with it, as a server may send new
 * ones (RFC 9110 §15.4.5), and so do the cookies it set, for a run that keeps a session.
 */
export async function notModifiedFrame(f: NotModifiedFetch): Promise<Buffer> {
  const { task, page } = f;
  const capture = captureOf(task);
  // One literal, no spread (see processTask); an undefined key is left out of the record's JSON.
  const record: PageRecord = {
    schema: PAGE_RECORD_SCHEMA,
    jobId: capture.jobId,
    runId: capture.runId,
    captureId: capture.captureId,
    url: task.url,
    finalUrl: page.finalUrl,
    status: page.status,
    outcome: 'not-modified',
    error: null,
    contentType: page.contentType,
    depth: task.depth,
    parentUrl: task.parentUrl,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: page.redirects,
    headers: page.headers,
    fetchedAt: f.fetchedAt,
    durationMs: f.durationMs,
    attempt: task.attempt,
    crawlerId: f.crawlerId,
    bodyBytes: 0,
    bodySha256: null,
    bodyEncoding: null,
    body: null,
    previousCaptureId: f.validators.captureId,
    userAgent: f.via ? f.via.userAgent : undefined,
    proxy: f.via?.proxy ? f.via.proxy : undefined,
    lastmod: task.lastmod ? task.lastmod : undefined,
  };
  const validators = responseValidators(page.headers);
  const header: OutcomeHeader = {
    type: 'outcome',
    taskId: task.taskId,
    outcome: 'not-modified',
    failure: null,
    links: [],
    status: page.status,
    fetchMs: f.durationMs,
    ...(validators ? { validators } : {}),
    ...(task.cookies && page.cookies?.changed ? { cookies: await page.cookies.toWire() } : {}),
  };
  return encodeOutcomeFrame(header, JSON.stringify(record));
}
