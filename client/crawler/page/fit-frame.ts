import { isRetriablePageError, type PageErrorCode } from '../../../shared/error-codes/index.js';
import type { OutcomeHeader } from '../../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../../shared/protocol/outcome-frame.js';
import type { PageRecord } from '../../../shared/protocol/page-record.js';

/** The code of an outcome too large for the scheduler to take (final: it would be as large again). */
export const RECORD_TOO_LARGE = 'RECORD_TOO_LARGE' satisfies PageErrorCode;

/**
 * The outcome frame, within the scheduler's limit on one message (`outcomeFrameLimit`, which the
 * crawler computes from the same fetch settings). A frame over it would close the connection and
 * come back forever, so:
 *
 * 1. a text body whose JSON form is too large (JSON writes a control character as six bytes, a
 *    legacy single-byte character as up to three) goes as base64 of its exact bytes, which the
 *    limit always has room for (`bodyEncoding: base64`, `charset: null`, as for binary bodies);
 * 2. a session's cookies (`cookies`, a run with `sessionCookies`) are left out;
 * 3. an outcome that still does not fit (links or entries past the limit's budget) becomes a final
 *    RECORD_TOO_LARGE failure, without body or links.
 */
export function fitOutcomeFrame(
  header: OutcomeHeader,
  record: PageRecord,
  rawBody: Buffer | null,
  limitBytes: number,
): Buffer {
  const frame = encodeOutcomeFrame(header, JSON.stringify(record));
  if (frame.length <= limitBytes) return frame;
  if (header.cookies) {
    // A session's cookies go first: the page matters more (the session keeps what it had).
    const { cookies: _cookies, ...withoutCookies } = header;
    return fitOutcomeFrame(withoutCookies, record, rawBody, limitBytes);
  }
  if (record.bodyEncoding === 'utf8' && rawBody !== null) {
    const asBase64: PageRecord = {
      ...record,
      body: rawBody.toString('base64'),
      bodyEncoding: 'base64',
      charset: null,
    };
    const smaller = encodeOutcomeFrame(header, JSON.stringify(asBase64));
    if (smaller.length <= limitBytes) return smaller;
  }
  const message = `the outcome is ${frame.length} bytes, over the ${limitBytes} bytes the scheduler takes in one message`;
  const failed: PageRecord = {
    ...record,
    outcome: 'failed',
    error: { code: RECORD_TOO_LARGE, message },
    links: [],
    nofollowLinks: [],
    body: null,
    bodyEncoding: null,
    charset: null,
  };
  const failedHeader: OutcomeHeader = {
    type: 'outcome',
    taskId: header.taskId,
    outcome: 'failed',
    failure: {
      code: RECORD_TOO_LARGE,
      message,
      retriable: isRetriablePageError(RECORD_TOO_LARGE, false),
      status: record.status,
      retryAfterMs: null,
    },
    links: [],
    ...(header.status !== undefined ? { status: header.status } : {}),
    ...(header.fetchMs !== undefined ? { fetchMs: header.fetchMs } : {}),
  };
  return encodeOutcomeFrame(failedHeader, JSON.stringify(failed));
}
