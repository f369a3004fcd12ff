import { captureKey, sha256Hex, type BlobStore } from '../../ports/blob-store.js';
import type { SinkRecord } from '../../ports/page-sink.js';
import type { BodyRef, LinksBlob, LinksRef } from '../../protocol/page-record.js';

export interface ClaimCheckOptions {
  blobStore: BlobStore;
  /** A record whose value is larger than this has its body, then its link lists, moved to the blob store. */
  thresholdBytes: number;
  /** Uploads in flight at once. */
  concurrency?: number;
}

export interface ClaimChecked {
  records: SinkRecord[];
  /** Records whose body moved. */
  moved: number;
  /** Records whose link lists moved. */
  movedLinks: number;
}

type RecordObject = Record<string, unknown>;

/**
 * The claim check: a record too large for the stream keeps its place in it, but what makes it large
 * goes to the blob store (under its capture's key, `captures/<jobId>/<runId>/<captureId>/body` or
 * `/links`; a record without a capture id by content, so what was stored before is not uploaded
 * again): its
 * body (`body: null` and a `bodyRef`) or its link lists (`links: null`, `nofollowLinks: null` and a
 * `linksRef` that keeps their counts), the larger first, and the other too if the record is still
 * over the threshold. A large page loses its body; a sitemap of 50,000 URLs both; a page with
 * thousands of long links and a small body its links only. Nothing else in a record is unbounded (URLs
 * are at most 8 KiB, headers are capped by the HTTP parser, redirects by their limit). Resolves once
 * every moved part is durable, so a record never points at a blob that is not there. Records that
 * are small, or have nothing to move, come back unchanged (same objects).
 */
export async function claimCheck(
  records: readonly SinkRecord[],
  options: ClaimCheckOptions,
): Promise<ClaimChecked> {
  const out = records.slice();
  const large = records.flatMap((record, index) =>
    record.value.length > options.thresholdBytes ? [index] : [],
  );
  let moved = 0;
  let movedLinks = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < large.length) {
      const index = large[next++] as number;
      const record = out[index] as SinkRecord;
      const parsed = parseObject(record.value);
      if (!parsed) continue;
      let current = parsed;
      let value = record.value;
      // The larger part first; the other only if the record is still over the threshold.
      const parts = [
        { size: bodySize(parsed), move: moveBody, count: () => (moved += 1) },
        { size: linksSize(parsed), move: moveLinks, count: () => (movedLinks += 1) },
      ].sort((a, b) => b.size - a.size);
      for (const part of parts) {
        if (part.size === 0 || value.length <= options.thresholdBytes) continue;
        current = await part.move(current, options.blobStore);
        value = Buffer.from(JSON.stringify(current));
        part.count();
      }
      if (current !== parsed) out[index] = { key: record.key, value };
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, large.length) }, worker));
  return { records: out, moved, movedLinks };
}

async function moveBody(record: RecordObject, store: BlobStore): Promise<RecordObject> {
  const base64 = record.bodyEncoding === 'base64';
  const bytes = Buffer.from(record.body as string, base64 ? 'base64' : 'utf8');
  const contentType = typeof record.contentType === 'string' ? record.contentType : null;
  const blob = await putPart(store, record, 'body', bytes, blobContentType(contentType, base64));
  const bodyRef: BodyRef = {
    store: store.location.store,
    bucket: store.location.bucket,
    key: blob.key,
    sha256: blob.sha256,
    bytes: blob.bytes,
  };
  return { ...record, body: null, bodyRef };
}

async function moveLinks(record: RecordObject, store: BlobStore): Promise<RecordObject> {
  const lists: LinksBlob = {
    links: record.links as string[],
    nofollowLinks: Array.isArray(record.nofollowLinks) ? (record.nofollowLinks as string[]) : [],
  };
  const blob = await putPart(
    store,
    record,
    'links',
    Buffer.from(JSON.stringify(lists)),
    'application/json; charset=utf-8',
  );
  const linksRef: LinksRef = {
    store: store.location.store,
    bucket: store.location.bucket,
    key: blob.key,
    sha256: blob.sha256,
    bytes: blob.bytes,
    links: lists.links.length,
    nofollowLinks: lists.nofollowLinks.length,
  };
  return { ...record, links: null, nofollowLinks: null, linksRef };
}

/**
 * A record that names its capture (page record `/3`) has its parts stored under the capture's key
 * (captureKey), so the Kafka record, its blobs and its SQL rows join on one id; an older record's
 * parts are stored by content, once.
 */
async function putPart(
  store: BlobStore,
  record: RecordObject,
  part: 'body' | 'links',
  bytes: Buffer,
  contentType: string,
): Promise<{ key: string; sha256: string; bytes: number }> {
  const { jobId, runId, captureId } = record;
  const key =
    typeof jobId === 'string' && typeof runId === 'string' && typeof captureId === 'string'
      ? captureKey({ jobId, runId, captureId, part })
      : null;
  if (key === null) return store.putContentAddressed(bytes, { contentType });
  await store.put(key, bytes, { contentType });
  return { key, sha256: sha256Hex(bytes), bytes: bytes.length };
}

function parseObject(value: Buffer): RecordObject | null {
  try {
    const parsed: unknown = JSON.parse(value.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as RecordObject)
      : null;
  } catch {
    return null;
  }
}

/** About what the body adds to the record (0: none to move). */
function bodySize(record: RecordObject): number {
  return typeof record.body === 'string' ? record.body.length : 0;
}

/** About what the link lists add to the record (0: none to move). */
function linksSize(record: RecordObject): number {
  const { links, nofollowLinks } = record;
  if (!Array.isArray(links) || !links.every((l) => typeof l === 'string')) return 0;
  const lists = [links, Array.isArray(nofollowLinks) ? nofollowLinks : []];
  return lists.reduce((sum, list) => sum + list.reduce((n: number, l: string) => n + l.length + 3, 0), 0);
}

const MIME = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** UTF-8 bodies were decoded (maybe from another charset), so their blob says charset=utf-8. */
function blobContentType(contentType: string | null, raw: boolean): string {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const valid = MIME.test(mime);
  if (raw) return valid ? mime : 'application/octet-stream';
  return `${valid ? mime : 'text/plain'}; charset=utf-8`;
}
