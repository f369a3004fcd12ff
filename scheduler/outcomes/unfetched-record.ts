import { randomUUID } from 'node:crypto';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import { DEFAULT_JOB_ID, PAGE_RECORD_SCHEMA, type PageRecord } from '../../shared/protocol/page-record.js';
import { DEFAULT_RUN_ID, type Lease } from '../../shared/protocol/task.js';
import type { PageErrorCode } from '../../shared/error-codes/index.js';

/**
 * The final record of a URL the scheduler settles without a crawler's record: robots.txt forbids
 * it, robots.txt could not be had, or the sink refused the crawler's record for good. A page record
 * like any other, written to the sink before the task is settled, so recovery after a crash finds
 * it as it finds crawlers' records. Its `captureId` is its own (no fetch made it) unless `capture`
 * says which fetch it stands for.
 */
export function unfetchedRecord(
  lease: Pick<Lease, 'url' | 'depth' | 'parentUrl' | 'attempt' | 'runId'>,
  error: { code: PageErrorCode; message: string },
  now: number,
  capture: { jobId: string; captureId?: string },
): SinkRecord {
  const record: PageRecord = {
    schema: PAGE_RECORD_SCHEMA,
    jobId: capture.jobId,
    runId: lease.runId,
    captureId: capture.captureId ?? randomUUID(),
    url: lease.url,
    finalUrl: null,
    status: null,
    outcome: 'failed',
    error: { code: error.code, message: error.message.slice(0, 500) },
    contentType: null,
    depth: lease.depth,
    parentUrl: lease.parentUrl,
    links: [],
    nofollowLinks: [],
    nofollow: false,
    redirects: [],
    headers: {},
    fetchedAt: new Date(now).toISOString(),
    durationMs: 0,
    attempt: lease.attempt,
    crawlerId: 'scheduler',
    bodyBytes: 0,
    bodySha256: null,
    bodyEncoding: null,
    body: null,
  };
  return { key: lease.url, value: Buffer.from(JSON.stringify(record)) };
}

/**
 * The record written instead of one the sink refuses for good (too large even after the claim
 * check): a small failed record (RECORD_UNWRITABLE) for the same URL, keeping the depth, parent,
 * attempt, job, run and capture id of the refused one when it can be read.
 */
export function unwritableRecord(
  refused: SinkRecord,
  reason: { code: string; message: string },
  now: number,
): SinkRecord {
  let fields: {
    depth?: unknown;
    parentUrl?: unknown;
    attempt?: unknown;
    jobId?: unknown;
    runId?: unknown;
    captureId?: unknown;
  } = {};
  try {
    fields = JSON.parse(refused.value.toString('utf8')) as typeof fields;
  } catch {
    // Not JSON: the defaults below.
  }
  const lease = {
    url: refused.key,
    depth: typeof fields.depth === 'number' ? fields.depth : 0,
    parentUrl: typeof fields.parentUrl === 'string' ? fields.parentUrl : null,
    attempt: typeof fields.attempt === 'number' ? fields.attempt : 1,
    runId: typeof fields.runId === 'string' ? fields.runId : DEFAULT_RUN_ID,
  };
  const error = { code: 'RECORD_UNWRITABLE' as const, message: `${reason.code}: ${reason.message}` };
  // The same fetch: the refused record's capture id, when it had one.
  return unfetchedRecord(lease, error, now, {
    jobId: typeof fields.jobId === 'string' ? fields.jobId : DEFAULT_JOB_ID,
    ...(typeof fields.captureId === 'string' ? { captureId: fields.captureId } : {}),
  });
}
