import {
  createReadStream,
  createWriteStream,
  fsyncSync,
  openSync,
  closeSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/**
 * Compresses a closed segment crash-safely: write `X.gz.tmp`, fsync, rename to `X.gz`, then remove
 * the plain file. A crash at any point leaves the plain file, which stays authoritative.
 */
export async function gzipSegment(plainPath: string): Promise<string> {
  const tmp = `${plainPath}.gz.tmp`;
  const target = `${plainPath}.gz`;
  await pipeline(createReadStream(plainPath), createGzip({ level: 6 }), createWriteStream(tmp));
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, target);
  unlinkSync(plainPath);
  return target;
}
