import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A real, small filesystem for disk-full tests: a tmpfs of `sizeBytes` (and, with `inodes`, room
 * for that many files and directories, its root included) mounted at `dir` (root only). `unmount` is safe to call twice; call it in `finally`.
 */
export function mountTmpfs(
  dir: string,
  sizeBytes: number,
  options: { inodes?: number } = {},
): { dir: string; unmount: () => void } {
  mkdirSync(dir, { recursive: true });
  const mountOptions = [`size=${sizeBytes}`, ...(options.inodes ? [`nr_inodes=${options.inodes}`] : [])];
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', mountOptions.join(','), 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`cannot mount a tmpfs at ${dir} (disk-full tests run as root): ${String(err)}`);
  }
  let mounted = true;
  return {
    dir,
    unmount: () => {
      if (!mounted) return;
      mounted = false;
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    },
  };
}

/**
 * Fills the filesystem holding `dir` with one file until a write fails for lack of space, then
 * gives back `leaveBytes` (rounded to pages by the filesystem). Returns the filler's path.
 */
export function fillDisk(dir: string, leaveBytes = 0, name = 'filler.bin'): string {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  let size = 0;
  try {
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let length = chunk.length; length >= 1;) {
      try {
        size += writeSync(fd, chunk, 0, length);
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOSPC') throw err;
        length = Math.floor(length / 2);
      }
    }
    if (leaveBytes > 0) ftruncateSync(fd, Math.max(0, size - leaveBytes));
  } finally {
    closeSync(fd);
  }
  return path;
}

export function freeDisk(filler: string): void {
  rmSync(filler, { force: true });
}
