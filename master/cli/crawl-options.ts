import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { envName } from '../../shared/config/load.js';
import {
  CRAWL_SETTING_KEYS,
  CrawlSettingsSchema,
  settingFromText,
  type CrawlSettingKey,
  type CrawlSettings,
} from '../../shared/crawl-settings/index.js';
import { InvalidInputError } from '../../shared/errors.js';
import type { CrawlRequest } from '../../shared/protocol/crawl-api.js';
import { flagOf, settingsFromFlags } from './crawl-flags.js';

/** `ackcrawl crawl` options as commander hands them over (strings until validated). */
export interface RawCrawlOptions {
  out: string;
  processes: string;
  concurrency: string;
  renderProcesses?: string;
  json?: boolean;
  gzip?: boolean;
  verbose?: boolean;
  /** The crawl's settings, by their flags' names (crawl-flags.ts): `hostDelay`, `proxy`, … */
  [setting: string]: unknown;
}

export interface CrawlPlan {
  /** The crawl's settings: the schema's defaults, under ACKCRAWL_* variables, under the flags. */
  settings: CrawlSettings;
  /**
   * What the user set (variables and flags) with the seeds: what `crawl --cluster` submits; the
   * scheduler's configuration fills the rest.
   */
  request: CrawlRequest;
  outDir: string;
  processes: number;
  concurrency: number;
  /** Render-capable crawler processes the embedded crawl starts when anything is rendered. */
  renderProcesses: number;
  json: boolean;
  gzip: boolean;
  verbose: boolean;
}

function int(name: string, value: string | undefined, fallback: number, problems: string[]): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    problems.push(`--${name} must be an integer ≥ 1, not '${value}'`);
    return fallback;
  }
  return n;
}

/** The crawl's settings the environment sets (ACKCRAWL_HOST_DELAY_MS, …), as the roles read them. */
function settingsFromEnv(env: Record<string, string | undefined>): {
  input: Record<string, unknown>;
  problems: string[];
} {
  const input: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of CRAWL_SETTING_KEYS) {
    const text = env[envName(key)];
    if (key === 'seeds' || text === undefined || text === '') continue;
    try {
      input[key] = settingFromText(key, text);
    } catch (err) {
      problems.push(`${key} (${envName(key)}): ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { input, problems };
}

/**
 * Checks every seed, option and ACKCRAWL_* crawl setting at once against the crawl settings
 * schema; throws one InvalidInputError listing every problem, each named as the user gave it
 * (the seed, the flag, or the variable).
 */
export function planCrawl(
  seedArgs: string[],
  raw: RawCrawlOptions,
  options: { needsOutDir?: boolean; env?: Record<string, string | undefined> } = {},
): CrawlPlan {
  const fromEnv = settingsFromEnv(options.env ?? {});
  const fromFlags = settingsFromFlags(raw);
  const problems = [...fromEnv.problems, ...fromFlags.problems];
  const given = { ...fromEnv.input, ...fromFlags.input };
  const parsed = CrawlSettingsSchema.safeParse({ ...given, seeds: seedArgs });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(describeIssue(issue.path, issue.message, seedArgs, fromFlags.input));
    }
  }
  const outDir = resolve(raw.out);
  const plan = {
    outDir,
    processes: int('processes', raw.processes, 2, problems),
    concurrency: int('concurrency', raw.concurrency, 32, problems),
    renderProcesses: int('render-processes', raw.renderProcesses, 1, problems),
    json: raw.json === true,
    gzip: raw.gzip === true,
    verbose: raw.verbose === true,
  };
  if (problems.length === 0 && options.needsOutDir !== false) checkWritable(outDir, problems);
  if (problems.length > 0 || !parsed.success) {
    throw new InvalidInputError('CRAWL_OPTIONS_INVALID', problems.join('\n'), { details: { problems } });
  }
  const settings = parsed.data;
  const request: CrawlRequest = { seeds: settings.seeds };
  for (const key of Object.keys(given) as CrawlSettingKey[]) {
    (request as Record<string, unknown>)[key] = settings[key];
  }
  return { settings, request, ...plan };
}

/** A schema problem, named as the user gave the value: `seed 'x'`, `--proxy #2`, `ACKCRAWL_…`. */
function describeIssue(
  path: readonly PropertyKey[],
  message: string,
  seedArgs: readonly string[],
  fromFlags: Record<string, unknown>,
): string {
  const [key, index] = path.map(String);
  if (key === undefined) return message;
  if (key === 'seeds') {
    if (index === undefined) return 'give at least one seed URL, e.g. ackcrawl crawl https://example.com/';
    return `seed '${seedArgs[Number(index)] ?? ''}': ${message}`;
  }
  const flag = flagOf(key === 'userAgents' ? 'userAgent' : key);
  if (flag && key in fromFlags) {
    // A list's item is named by its place, never quoted: a proxy URL may hold a password.
    return `${flag}${index === undefined ? '' : ` #${Number(index) + 1}`}: ${message}`;
  }
  return `${path.map(String).join('.')} (${envName(key)}): ${message}`;
}

/**
 * mkdir -p one level at a time: node's recursive mkdir never returns for some paths under /proc,
 * and a user's typo must get an error, not a hang.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  let cursor = dir;
  while (!existsSync(cursor) && dirname(cursor) !== cursor) {
    missing.unshift(cursor);
    cursor = dirname(cursor);
  }
  for (const path of missing) mkdirSync(path);
}

function checkWritable(dir: string, problems: string[]): void {
  try {
    makeDirs(dir);
    accessSync(dir, constants.W_OK);
    const probe = join(dir, `.write-probe-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (err) {
    problems.push(
      `--out ${dir} is not a writable folder (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}
