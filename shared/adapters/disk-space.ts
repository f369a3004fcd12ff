import { closeSync, fsyncSync, openSync, statfsSync } from 'node:fs';

/** errno codes meaning "no room left": the disk (ENOSPC) or the user's quota on it (EDQUOT). */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

export function isDiskFull(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && FULL.has(String(err.code));
}

/** Bytes an unprivileged writer may still use on the filesystem holding `path`; null if unknown. */
export function freeBytes(path: string): number | null {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

export function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'unknown';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/**
 * Makes a directory's entries durable: after a file in it was created, renamed or removed, the
 * file's own fsync does not cover its name. Filesystems that cannot sync a directory (EINVAL) have
 * nothing to sync.
 */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch (err) {
    if (!(typeof err === 'object' && err !== null && 'code' in err && err.code === 'EINVAL')) throw err;
  } finally {
    closeSync(fd);
  }
}
