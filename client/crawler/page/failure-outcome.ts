import { isRetriablePageError, type PageErrorCode } from '../../../shared/error-codes/index.js';
import type { OutcomeHeader, WireFailure, WireTask } from '../../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../../shared/protocol/outcome-frame.js';
import { captureOf } from './capture.js';
import { PAGE_RECORD_SCHEMA, type PageRecord } from '../../../shared/protocol/page-record.js';

/** The code of a task the crawler's own code failed on (a bug, not the page): retried. */
export const CRAWLER_ERROR = 'CRAWLER_ERROR' satisfies PageErrorCode;

/**
 * The outcome of a task whose processing threw instead of producing an outcome (processTask never
 * should): a failed record with CRAWLER_ERROR, retriable, so the task follows the retry tiers like
 * any failure instead of being lost with a crashed process or held until its lease runs out.
 */
export function failureOutcome(task: WireTask, err: unknown, crawlerId: string, now = Date.now()): Buffer {
  const message =
    `the crawler failed on this task: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
  const record: PageRecord = {
    schema: PAGE_RECORD_SCHEMA,
    ...captureOf(task),
    url: task.url,
    finalUrl: null,
    status: null,
    outcome: 'failed',
    error: { code: CRAWLER_ERROR, message },
    contentType: null,
    depth: task.depth,
    parentUrl: task.parentUrl,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: {},
    fetchedAt: new Date(now).toISOString(),
    durationMs: 0,
    attempt: task.attempt,
    crawlerId,
    bodyBytes: 0,
    bodySha256: null,
    bodyEncoding: null,
    body: null,
    ...(task.lastmod ? { lastmod: task.lastmod } : {}),
  };
  const failure: WireFailure = {
    code: CRAWLER_ERROR,
    message,
    retriable: isRetriablePageError(CRAWLER_ERROR, true),
    status: null,
    retryAfterMs: null,
  };
  const header: OutcomeHeader = {
    type: 'outcome',
    taskId: task.taskId,
    outcome: 'failed',
    failure,
    links: [],
    status: null,
  };
  return encodeOutcomeFrame(header, JSON.stringify(record));
}
