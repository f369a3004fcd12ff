import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../shared/files/atomic-write.js';
import type { JobSettings } from './crawl-scheduler.js';

/**
 * The crawl a cluster scheduler was given (`POST /crawl`), kept on disk so a restarted scheduler
 * resumes the same crawl with the same scope and limits. It holds proxy credentials: it is written
 * owner-only (0600) and atomically (temp file, fsync, rename, fsync of the folder), so a crash
 * leaves the previous job or the new one, never a torn file.
 */
export function loadJob(path: string): JobSettings | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as JobSettings;
}

export function saveJob(path: string, job: JobSettings): void {
  writeFileAtomic(path, JSON.stringify(job, null, 2), { mode: 0o600 });
}
