import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { JobSettings } from './crawl-scheduler.js';

/**
 * The crawl a cluster scheduler was given (`POST /crawl`), kept on disk so a restarted scheduler
 * resumes the same crawl with the same scope and limits. Written atomically (temp + rename).
 */
export function loadJob(path: string): JobSettings | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as JobSettings;
}

export function saveJob(path: string, job: JobSettings): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(job, null, 2));
  renameSync(tmp, path);
}
