import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  CrawlSettingsPatchSchema,
  formatProblems,
  mergeCrawlSettings,
  settingsProblems,
  type CrawlSettings,
} from '../shared/crawl-settings/index.js';
import { ConfigError } from '../shared/errors.js';
import { writeFileAtomic } from '../shared/files/atomic-write.js';

/**
 * The crawl a cluster scheduler was given (`POST /crawl`), kept on disk so a restarted scheduler
 * resumes the same crawl with the same scope and limits. It holds proxy credentials: it is written
 * owner-only (0600) and atomically (temp file, fsync, rename, fsync of the folder), so a crash
 * leaves the previous job or the new one, never a torn file.
 *
 * The file is `{ "version": 2, "settings": { …a crawl's settings… } }`. Version 1 (before
 * shared/crawl-settings) was the settings themselves with the crawlers' part nested under
 * `fetch`; it still loads. Settings a file lacks (written before they existed) are the
 * scheduler's configured ones.
 */
export const JOB_FILE_VERSION = 2;

const jobFileSchema = z.object({
  version: z.literal(JOB_FILE_VERSION),
  settings: CrawlSettingsPatchSchema,
});

/** A version 1 file: `{ seeds, scope, …, fetch: { userAgent, …timeouts, proxies? } }`, flattened. */
function fromVersion1(file: Record<string, unknown>): Record<string, unknown> {
  const { fetch, ...rest } = file;
  return { ...(typeof fetch === 'object' && fetch !== null ? fetch : {}), ...rest };
}

/**
 * The crawl saved at `path` over `base` (the scheduler's configured settings), or null when there
 * is none.
 * @throws ConfigError listing every problem of a file that does not validate.
 */
export function loadJob(path: string, base: CrawlSettings): CrawlSettings | null {
  if (!existsSync(path)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError([`${path}: ${err instanceof Error ? err.message : String(err)}`]);
  }
  const file =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  if (file && 'version' in file) {
    const parsed = jobFileSchema.safeParse(file);
    if (!parsed.success) throw problemsOf(path, parsed.error);
    return mergeCrawlSettings(base, parsed.data.settings);
  }
  const parsed = CrawlSettingsPatchSchema.safeParse(file ? fromVersion1(file) : raw);
  if (!parsed.success) throw problemsOf(path, parsed.error);
  return mergeCrawlSettings(base, parsed.data);
}

function problemsOf(path: string, error: z.ZodError): ConfigError {
  return new ConfigError(formatProblems(settingsProblems(error)).map((p) => `${path}: ${p}`));
}

export function saveJob(path: string, job: CrawlSettings): void {
  writeFileAtomic(path, JSON.stringify({ version: JOB_FILE_VERSION, settings: job }, null, 2), {
    mode: 0o600,
  });
}
