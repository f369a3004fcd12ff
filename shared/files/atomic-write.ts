import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** File mode of the new file (default 0600: these files hold credentials). */
  mode?: number;
}

/**
 * Writes `data` to `path` so that a reader, or a crash at any point, sees the old file or the new
 * one, never a part: a temp file beside it (created with `mode`, so it is never readable by others,
 * not even for a moment), fsynced, renamed over `path`, then the directory fsynced so the rename
 * itself survives a power cut.
 */
export function writeFileAtomic(path: string, data: string | Buffer, options: AtomicWriteOptions = {}): void {
  const tmp = writeTemp(path, data, options.mode ?? 0o600);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dirname(path));
}

/**
 * Like writeFileAtomic, but never replaces an existing file: returns false (and writes nothing)
 * when `path` exists. Two processes racing to create the same file both see one winner's content.
 */
export function createFileAtomic(
  path: string,
  data: string | Buffer,
  options: AtomicWriteOptions = {},
): boolean {
  const tmp = writeTemp(path, data, options.mode ?? 0o600);
  try {
    // link(2) fails with EEXIST instead of replacing, which rename(2) would do.
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  fsyncDir(dirname(path));
  return true;
}

function writeTemp(path: string, data: string | Buffer, mode: number): string {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    for (let written = 0; written < bytes.length;) {
      written += writeSync(fd, bytes, written, bytes.length - written);
    }
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  return tmp;
}

/** fsync a directory, so that a file created or renamed in it is there after a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
