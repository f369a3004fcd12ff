import {
  createReadStream,
  createWriteStream,
  fsyncSync,
  openSync,
  closeSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { fsyncDir } from '../disk-space.js';

/**
 * Compresses a closed segment crash-safely: write `X.gz.tmp`, fsync, rename to `X.gz` and fsync
 * the directory, then remove the plain file. A crash at any point leaves the plain file, which
 * stays authoritative. A failure (a full disk, say) removes the temp file, so a failed compression
 * gives back the space it took.
 */
export async function gzipSegment(plainPath: string): Promise<string> {
  const tmp = `${plainPath}.gz.tmp`;
  const target = `${plainPath}.gz`;
  const dir = dirname(plainPath);
  try {
    await pipeline(createReadStream(plainPath), createGzip({ level: 6 }), createWriteStream(tmp));
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  // The .gz must be durable under its name before the plain file, its only other copy, goes.
  fsyncDir(dir);
  rmSync(plainPath);
  fsyncDir(dir);
  return target;
}
