import { StorageError } from '../../errors.js';
import { sha256Hex, type BlobStore } from '../../ports/blob-store.js';
import { bodyRefSchema, linksBlobSchema, linksRefSchema } from '../../protocol/page-record.js';

type RecordObject = Record<string, unknown>;

export interface RestoreOptions {
  /** Read the body back as well (default: only the link lists, which are small next to bodies). */
  body?: boolean;
}

/**
 * Undoes the claim check (claim-check.ts) on one stored record: link lists, and with `body` the
 * body too, are read from the blob store, checked against their hashes and put back, so the record
 * is again as its crawler wrote it. Records without references come back as they are. Rejects with
 * a StorageError when a blob is missing, in another store, or does not match its hash.
 */
export async function restoreClaimChecks(
  value: Buffer,
  store: BlobStore,
  options: RestoreOptions = {},
): Promise<Buffer> {
  const text = value.toString('utf8');
  // Most records have no references: no need to parse them.
  if (!text.includes('"linksRef"') && !(options.body && text.includes('"bodyRef"'))) return value;
  let record = JSON.parse(text) as RecordObject;
  let changed = false;
  if (record.linksRef !== undefined) {
    record = await restoreLinks(record, store);
    changed = true;
  }
  if (options.body && record.bodyRef !== undefined && record.bodyRef !== null) {
    record = await restoreBody(record, store);
    changed = true;
  }
  return changed ? Buffer.from(JSON.stringify(record)) : value;
}

async function restoreLinks(record: RecordObject, store: BlobStore): Promise<RecordObject> {
  const ref = linksRefSchema.parse(record.linksRef);
  const bytes = await fetchChecked(ref, store);
  const lists = linksBlobSchema.parse(JSON.parse(bytes.toString('utf8')));
  if (lists.links.length !== ref.links || lists.nofollowLinks.length !== ref.nofollowLinks) {
    throw mismatch(ref.key, 'its link counts differ from the record');
  }
  const { linksRef: _linksRef, ...rest } = record;
  return { ...rest, links: lists.links, nofollowLinks: lists.nofollowLinks };
}

async function restoreBody(record: RecordObject, store: BlobStore): Promise<RecordObject> {
  const ref = bodyRefSchema.parse(record.bodyRef);
  const bytes = await fetchChecked(ref, store);
  const body = record.bodyEncoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8');
  const { bodyRef: _bodyRef, ...rest } = record;
  return { ...rest, body };
}

async function fetchChecked(
  ref: { store: string; bucket: string; key: string; sha256: string },
  store: BlobStore,
): Promise<Buffer> {
  const here = store.location;
  if (ref.store !== here.store || ref.bucket !== here.bucket) {
    throw new StorageError(
      'CLAIM_CHECK_ELSEWHERE',
      `blob ${ref.key} is in ${ref.store}:${ref.bucket}, not in ${here.store}:${here.bucket}`,
    );
  }
  const bytes = await store.get(ref.key);
  if (sha256Hex(bytes) !== ref.sha256) throw mismatch(ref.key, 'its SHA-256 differs from the record');
  return bytes;
}

function mismatch(key: string, why: string): StorageError {
  return new StorageError('CLAIM_CHECK_MISMATCH', `blob ${key} does not belong to its record: ${why}`);
}
