import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEDULER_FILE } from '../../shared/protocol/why.js';

/**
 * The scheduler of an embedded crawl still running in `out`: the API address and token it wrote
 * to `scheduler.json` (scheduler/main.ts), or null when there is none (the crawl is over).
 */
export function runningScheduler(out: string): { api: string; token?: string } | null {
  const path = join(out, SCHEDULER_FILE);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { api: string; token?: string };
  } catch {
    return null;
  }
}
