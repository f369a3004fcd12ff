import { createHash } from 'node:crypto';
import { InvalidInputError, StorageError } from '../errors.js';

/**
 * Where raw bytes go: page bodies too large to ride in a page record (the claim check), and raw
 * archives. Keys are `/`-separated paths of safe segments; every method resolves once the store
 * has answered, and a resolved `put` is durable.
 */
export interface BlobStore {
  /** Which store and bucket (or directory) keys refer to; page records carry it in `bodyRef`. */
  readonly location: BlobLocation;

  /**
   * Stores `body` under a key derived from its SHA-256 (see `contentKey`). The same body is
   * stored once: when the key exists the upload is skipped and `existed` is true.
   */
  putContentAddressed(body: Buffer, options?: PutOptions): Promise<ContentAddressedBlob>;

  /** Stores `body` under `key`, replacing what was there. */
  put(key: string, body: Buffer, options?: PutOptions): Promise<void>;

  /** The bytes under `key`; rejects with BlobNotFoundError (code BLOB_NOT_FOUND) when missing. */
  get(key: string): Promise<Buffer>;

  exists(key: string): Promise<boolean>;

  /**
   * Every stored key that starts with `prefix`, in no particular order. The prefix is a prefix of
   * keys, not only a folder: `archives/j/2024/04/01/t-p0-` finds `archives/j/2024/04/01/t-p0-5-9`.
   * `''` lists the whole store. Rejects with BLOB_BAD_KEY when no key could start with `prefix`.
   */
  list(prefix: string): AsyncIterable<string>;

  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;

  /** Safe to call twice; later calls of the other methods reject with BLOB_STORE_CLOSED. */
  close(): Promise<void>;
}

export interface BlobLocation {
  store: 's3' | 'file';
  /** The S3 bucket, or the local directory. */
  bucket: string;
}

export interface PutOptions {
  contentType?: string;
}

export interface ContentAddressedBlob {
  key: string;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  bytes: number;
  /** The body was already stored (nothing was uploaded). */
  existed: boolean;
}

export class BlobNotFoundError extends StorageError {
  constructor(key: string, options: { cause?: unknown } = {}) {
    super('BLOB_NOT_FOUND', `no blob under key ${key}`, { ...options, status: 404 });
  }
}

export function blobStoreClosed(): StorageError {
  return new StorageError('BLOB_STORE_CLOSED', 'the blob store is closed');
}

export function sha256Hex(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** `bodies/sha256/ab/cd/abcd…`: two fan-out levels keep directories and listings small. */
export function contentKey(sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new InvalidInputError('BLOB_BAD_KEY', `not a SHA-256: ${sha256}`);
  return `bodies/sha256/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
}

/**
 * Raw archives by job and day (seed 000: files organised by task ID and time), in UTC:
 * `archives/<jobId>/<yyyy>/<mm>/<dd>/<name>`.
 */
export function archiveKey(input: { jobId: string; date: Date; name: string }): string {
  const { jobId, date, name } = input;
  if (Number.isNaN(date.getTime())) throw new InvalidInputError('BLOB_BAD_KEY', 'archive date is invalid');
  const yyyy = String(date.getUTCFullYear()).padStart(4, '0');
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(date.getUTCDate()).padStart(2, '0');
  for (const [what, segment] of [
    ['jobId', jobId],
    ['name', name],
  ] as const) {
    if (!isSafeSegment(segment)) {
      throw new InvalidInputError(
        'BLOB_BAD_KEY',
        `archive ${what} must be one safe path segment: ${segment}`,
      );
    }
  }
  return `archives/${jobId}/${yyyy}/${mm}/${dd}/${name}`;
}

/**
 * Where the claim check puts one part of one capture (page record `/3`):
 * `captures/<jobId>/<runId>/<captureId>/<part>`, so a record's blobs are found from its ids and a
 * run's blobs listed by prefix. Null when an id is not one safe path segment (the caller then
 * stores the part by content, under `contentKey`).
 */
export function captureKey(input: {
  jobId: string;
  runId: string;
  captureId: string;
  part: 'body' | 'links';
}): string | null {
  const { jobId, runId, captureId, part } = input;
  if (![jobId, runId, captureId].every(isSafeSegment)) return null;
  return `captures/${jobId}/${runId}/${captureId}/${part}`;
}

const SEGMENT = /^[A-Za-z0-9._=+-]{1,200}$/;

function isSafeSegment(segment: string): boolean {
  return SEGMENT.test(segment) && segment !== '.' && segment !== '..';
}

/**
 * A valid `list` prefix: empty, or the start of a valid key (segments of safe characters, the last
 * one possibly empty or partial).
 */
export function assertBlobPrefix(prefix: string): void {
  if (prefix === '') return;
  const segments = prefix.split('/');
  const last = segments.pop() ?? '';
  const ok = prefix.length <= 1024 && segments.every(isSafeSegment) && (last === '' || SEGMENT.test(last));
  if (!ok)
    throw new InvalidInputError(
      'BLOB_BAD_KEY',
      `invalid blob key prefix: ${JSON.stringify(prefix.slice(0, 200))}`,
    );
}

/**
 * Keys are the same on every adapter, so a key that works on the local folder works on S3 and the
 * other way round: 1–1024 characters, segments of letters, digits and `._=+-`, no `.`/`..`.
 */
export function assertBlobKey(key: string): void {
  if (key.length === 0 || key.length > 1024 || !key.split('/').every(isSafeSegment)) {
    throw new InvalidInputError('BLOB_BAD_KEY', `invalid blob key: ${JSON.stringify(key.slice(0, 200))}`);
  }
}
