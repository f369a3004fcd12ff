import { errorMessage } from '../../shared/errors.js';
import type { ErrorCode } from '../../shared/error-codes/index.js';
import { BlobNotFoundError, sha256Hex, type BlobStore } from '../../shared/ports/blob-store.js';
import type { ExtractFailureRow, ResultRow } from '../../shared/ports/sql-store.js';
import { z } from 'zod';
import { storedPageRecordSchema, type StoredPageRecord } from '../../shared/protocol/page-record.js';
import { isHtmlMediaType, mediaTypeOf } from '../../shared/text/media-type.js';
import { cleanHtml } from './clean-html.js';
import type { CleanedPage } from './cleaned-page.js';

/** The longest id the results table keeps (shared/adapters/sql-store/migrations.ts KEY_LENGTHS.id). */
const MAX_ID_CHARS = 128;
const id = z.string().min(1).max(MAX_ID_CHARS);

/**
 * The records the cleaner reads: `/4`, and `/3` (older raw data, cleaned without a re-crawl: a
 * `/3` record is a valid `/4` one but for `schema`, docs/page-record.md). Ids the results table
 * cannot key are the record's fault, found here, so they never fail a whole chunk in SQL.
 */
const readableRecordSchema = storedPageRecordSchema.extend({
  schema: z.enum(['ackcrawl.page/3', storedPageRecordSchema.shape.schema.value]),
  jobId: id,
  runId: id,
  captureId: id,
});

export interface CleanRecordOptions {
  /** Where claim-checked bodies are read from; null when records are known to keep bodies inline. */
  blobStore: BlobStore | null;
  /** Pages longer than this (UTF-16 code units of the decoded text) are refused. */
  maxHtmlChars: number;
  maxElements: number;
  now: () => number;
}

/**
 * What one record turns into: a results row, a failure to log (the record cannot be cleaned, and
 * never will be: it is skipped), or nothing (a record that is no page to clean: a failed fetch, a
 * redirect or a 304 without a body).
 */
export type RecordOutcome =
  | { kind: 'result'; row: ResultRow }
  | { kind: 'failure'; failure: ExtractFailureRow }
  | { kind: 'skip'; reason: string };

/**
 * Cleans one page record read at `source`. Rejects only when trying again can help (the blob
 * store is unreachable): the caller then stops before committing its position, and the record
 * comes again. Everything that is the record's fault comes back as a failure.
 */
export async function cleanRecord(
  value: Buffer,
  source: string,
  options: CleanRecordOptions,
): Promise<RecordOutcome> {
  let record: StoredPageRecord;
  try {
    const parsed = readableRecordSchema.safeParse(JSON.parse(value.toString('utf8')));
    if (!parsed.success) {
      const raw = looseIds(value);
      const problems = parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`);
      return fail(source, raw, 'EXTRACT_BAD_RECORD', `not a page record: ${problems.join('; ')}`, options);
    }
    record = { ...parsed.data, schema: storedPageRecordSchema.shape.schema.value };
  } catch (err) {
    return fail(source, {}, 'EXTRACT_BAD_RECORD', `not JSON: ${errorMessage(err)}`, options);
  }
  const ids = { captureId: record.captureId, runId: record.runId, url: record.url };
  if (record.outcome !== 'ok') return { kind: 'skip', reason: `a ${record.outcome} fetch` };
  // A page that redirects to another host is recorded as the 3xx it answered (its target is a
  // link): its body, if any, is the server's "moved" note, not an article.
  if (record.status !== null && record.status >= 300 && record.status < 400) {
    return { kind: 'skip', reason: `a redirect (HTTP ${record.status})` };
  }
  const body = await bodyOf(record, options.blobStore);
  if (body.kind === 'missing') return fail(source, ids, 'EXTRACT_BODY_MISSING', body.reason, options);
  if (body.kind === 'none') return { kind: 'skip', reason: 'no body' };
  if (record.bodyEncoding === 'base64') {
    return fail(
      source,
      ids,
      'EXTRACT_BINARY_BODY',
      `the body is bytes (${record.contentType ?? 'no type'})`,
      options,
    );
  }
  const media =
    record.sniffedContentType ??
    mediaTypeOf(record.contentType, Buffer.from(body.text.slice(0, 1_024))).essence;
  if (!isHtmlMediaType(media)) {
    return fail(source, ids, 'EXTRACT_NOT_HTML', `the body is ${media}, not HTML`, options);
  }
  if (body.text.length > options.maxHtmlChars) {
    return fail(
      source,
      ids,
      'EXTRACT_TOO_LARGE',
      `the page has ${body.text.length} characters, more than ${options.maxHtmlChars}`,
      options,
    );
  }
  let page: CleanedPage;
  try {
    page = cleanHtml(body.text, record.finalUrl ?? record.url, { maxElements: options.maxElements });
  } catch (err) {
    return fail(source, ids, 'EXTRACT_FAILED', errorMessage(err).slice(0, 500), options);
  }
  return { kind: 'result', row: toResultRow(record, page, options.now()) };
}

export function toResultRow(
  record: Pick<
    StoredPageRecord,
    'captureId' | 'runId' | 'jobId' | 'url' | 'status' | 'fetchedAt' | 'finalUrl'
  >,
  page: CleanedPage,
  at: number,
): ResultRow {
  const fetchedAt = Date.parse(record.fetchedAt);
  return {
    captureId: record.captureId,
    runId: record.runId,
    jobId: record.jobId,
    url: record.url,
    status: record.status,
    data: { ...page.extra, finalUrl: record.finalUrl },
    at,
    title: page.title,
    author: page.author,
    publishedAt: page.publishedAt,
    language: page.language,
    description: page.description,
    canonicalUrl: page.canonicalUrl,
    mainText: page.mainText,
    fetchedAt: Number.isFinite(fetchedAt) ? fetchedAt : null,
  };
}

type Body = { kind: 'text'; text: string } | { kind: 'none' } | { kind: 'missing'; reason: string };

async function bodyOf(record: StoredPageRecord, store: BlobStore | null): Promise<Body> {
  const ref = record.bodyRef;
  if (ref === undefined || ref === null) {
    return record.body === null ? { kind: 'none' } : { kind: 'text', text: record.body };
  }
  if (store === null)
    return {
      kind: 'missing',
      reason: `the body is in ${ref.store}:${ref.bucket}, and no blob store is configured`,
    };
  const here = store.location;
  if (ref.store !== here.store || ref.bucket !== here.bucket) {
    return {
      kind: 'missing',
      reason: `the body is in ${ref.store}:${ref.bucket}, not in ${here.store}:${here.bucket}`,
    };
  }
  let bytes: Buffer;
  try {
    bytes = await store.get(ref.key);
  } catch (err) {
    if (err instanceof BlobNotFoundError) return { kind: 'missing', reason: `no blob ${ref.key}` };
    throw err; // unreachable or refusing: retriable, or a person must fix the settings
  }
  if (sha256Hex(bytes) !== ref.sha256)
    return { kind: 'missing', reason: `blob ${ref.key} does not match its SHA-256` };
  return { kind: 'text', text: record.bodyEncoding === 'base64' ? '' : bytes.toString('utf8') };
}

/** The ids of a record that failed validation, where they are strings, for the failure row. */
function looseIds(value: Buffer): Partial<Pick<ExtractFailureRow, 'captureId' | 'runId' | 'url'>> {
  try {
    const raw = JSON.parse(value.toString('utf8')) as Record<string, unknown>;
    const str = (v: unknown): string | null =>
      typeof v === 'string' && v.length > 0 && v.length <= 128 ? v : null;
    return {
      captureId: str(raw.captureId),
      runId: str(raw.runId),
      url: typeof raw.url === 'string' ? raw.url : null,
    };
  } catch {
    return {};
  }
}

function fail(
  source: string,
  ids: Partial<Pick<ExtractFailureRow, 'captureId' | 'runId' | 'url'>>,
  code: ErrorCode,
  reason: string,
  options: CleanRecordOptions,
): RecordOutcome {
  return {
    kind: 'failure',
    failure: {
      source,
      captureId: ids.captureId ?? null,
      runId: ids.runId ?? null,
      url: ids.url ?? null,
      code,
      reason,
      at: options.now(),
    },
  };
}
