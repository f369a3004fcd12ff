import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { StorageError } from '../../errors.js';
import {
  assertBlobKey,
  assertBlobPrefix,
  BlobNotFoundError,
  blobStoreClosed,
  type BlobLocation,
  type BlobStore,
  type ContentAddressedBlob,
  type PutOptions,
} from '../../ports/blob-store.js';
import { putByContent } from './put-by-content.js';

/** Errors no retry can fix: the path is not writable, or a file stands where a directory must be. */
const PERMANENT = new Set(['EACCES', 'EPERM', 'EROFS', 'EISDIR', 'ENOTDIR', 'EEXIST', 'ENAMETOOLONG']);
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

/**
 * Blobs as files under one directory, the key as the relative path. A put writes a temporary file
 * beside the target, fsyncs it, renames it over the target and fsyncs the directory, so a reader
 * (or a crash) sees the old bytes or the new ones, never a torn file. Temporary names contain `~`,
 * which no key can, so they never shadow a key. Content types are not kept.
 */
export class LocalBlobStore implements BlobStore {
  readonly location: BlobLocation;
  private readonly root: string;
  private closed = false;

  constructor(options: { dir: string }) {
    this.root = resolve(options.dir);
    this.location = { store: 'file', bucket: this.root };
    mkdirSync(this.root, { recursive: true });
  }

  async putContentAddressed(body: Buffer, options: PutOptions = {}): Promise<ContentAddressedBlob> {
    return putByContent(this, body, options);
  }

  async put(key: string, body: Buffer, _options: PutOptions = {}): Promise<void> {
    const path = this.pathOf(key);
    const tmp = `${path}~${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(path), { recursive: true });
      const file = await open(tmp, 'wx');
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, path);
      await syncDir(dirname(path));
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw ioError(`cannot write blob ${key}`, err);
    }
  }

  async get(key: string): Promise<Buffer> {
    const path = this.pathOf(key);
    try {
      return await readFile(path);
    } catch (err) {
      if (MISSING.has(errnoCode(err))) throw new BlobNotFoundError(key, { cause: err });
      throw ioError(`cannot read blob ${key}`, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    try {
      return (await stat(path)).isFile();
    } catch (err) {
      if (MISSING.has(errnoCode(err))) return false;
      throw ioError(`cannot stat blob ${key}`, err);
    }
  }

  async *list(prefix: string): AsyncIterable<string> {
    if (this.closed) throw blobStoreClosed();
    assertBlobPrefix(prefix);
    // Only the folder the prefix points into is walked.
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    for await (const key of this.walk(folder)) if (key.startsWith(prefix)) yield key;
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (err) {
      if (MISSING.has(errnoCode(err))) return;
      throw ioError(`cannot delete blob ${key}`, err);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Keys of the files under `folder` (`''` or ending in `/`), temporary files left out. */
  private async *walk(folder: string): AsyncIterable<string> {
    let entries;
    try {
      entries = await readdir(join(this.root, ...folder.split('/').filter(Boolean)), { withFileTypes: true });
    } catch (err) {
      if (MISSING.has(errnoCode(err))) return;
      throw ioError(`cannot list blobs under ${folder}`, err);
    }
    for (const entry of entries) {
      if (entry.name.includes('~')) continue;
      if (entry.isDirectory()) yield* this.walk(`${folder}${entry.name}/`);
      else if (entry.isFile()) yield `${folder}${entry.name}`;
    }
  }

  private pathOf(key: string): string {
    if (this.closed) throw blobStoreClosed();
    assertBlobKey(key);
    return join(this.root, ...key.split('/'));
  }
}

/** Makes a rename durable: the directory entry itself must reach the disk. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function errnoCode(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
}

function ioError(message: string, err: unknown): StorageError {
  const code = errnoCode(err);
  // Permissions, a read-only disk, a file where a folder should be: trying again will not help.
  return new StorageError(
    PERMANENT.has(code) ? 'BLOB_ACCESS' : 'BLOB_IO',
    `${message}: ${code || String(err)}`,
    {
      cause: err,
    },
  );
}
