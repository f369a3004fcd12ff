import type { BlobStore } from '../../ports/blob-store.js';
import type { SinkRecord } from '../../ports/page-sink.js';
import type { BodyRef } from '../../protocol/page-record.js';

export interface ClaimCheckOptions {
  blobStore: BlobStore;
  /** A record whose value is larger than this has its body moved to the blob store. */
  thresholdBytes: number;
  /** Uploads in flight at once. */
  concurrency?: number;
}

interface BodyFields {
  body: string;
  bodyEncoding?: unknown;
  contentType?: unknown;
}

/**
 * The claim check: a record too large for the stream keeps its place in it, but its body goes to
 * the blob store (content-addressed, so a body seen before is not uploaded again) and the record
 * carries `body: null` and a `bodyRef` instead. Resolves once every moved body is durable, so a
 * record never points at a blob that is not there. Records that are small, or have no body to
 * move, come back unchanged (same objects).
 */
export async function claimCheck(
  records: readonly SinkRecord[],
  options: ClaimCheckOptions,
): Promise<{ records: SinkRecord[]; moved: number }> {
  const out = records.slice();
  const large = records.flatMap((record, index) =>
    record.value.length > options.thresholdBytes ? [index] : [],
  );
  let moved = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < large.length) {
      const index = large[next++] as number;
      const rewritten = await moveBody(out[index] as SinkRecord, options.blobStore);
      if (rewritten) {
        out[index] = rewritten;
        moved += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, large.length) }, worker));
  return { records: out, moved };
}

async function moveBody(record: SinkRecord, store: BlobStore): Promise<SinkRecord | null> {
  const parsed = parseWithBody(record.value);
  if (!parsed) return null;
  const base64 = parsed.bodyEncoding === 'base64';
  const bytes = Buffer.from(parsed.body, base64 ? 'base64' : 'utf8');
  const blob = await store.putContentAddressed(bytes, {
    contentType: blobContentType(typeof parsed.contentType === 'string' ? parsed.contentType : null, base64),
  });
  const bodyRef: BodyRef = {
    store: store.location.store,
    bucket: store.location.bucket,
    key: blob.key,
    sha256: blob.sha256,
    bytes: blob.bytes,
  };
  return { key: record.key, value: Buffer.from(JSON.stringify({ ...parsed, body: null, bodyRef })) };
}

function parseWithBody(value: Buffer): (BodyFields & Record<string, unknown>) | null {
  try {
    const parsed: unknown = JSON.parse(value.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const body = (parsed as { body?: unknown }).body;
    return typeof body === 'string' && body.length > 0
      ? (parsed as BodyFields & Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const MIME = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** UTF-8 bodies were decoded (maybe from another charset), so their blob says charset=utf-8. */
function blobContentType(contentType: string | null, raw: boolean): string {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const valid = MIME.test(mime);
  if (raw) return valid ? mime : 'application/octet-stream';
  return `${valid ? mime : 'text/plain'}; charset=utf-8`;
}
