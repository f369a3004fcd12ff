import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { clientToken } from '../../shared/config/cluster-token.js';
import { InvalidInputError } from '../../shared/errors.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import { crawlScopeOf, type CrawlScope } from '../../shared/url/crawl-scope.js';
import { SCOPE_MODES } from '../../shared/url/scope.js';
import { explainUrl } from '../../shared/why/explain-url.js';
import { httpStatusCode, toErrorCode } from '../../shared/error-codes/index.js';
import { runningScheduler } from './running-scheduler.js';

export interface WhyOptions {
  scheduler?: string;
  token?: string;
  out?: string;
  json?: boolean;
}

/** What `why` takes from the environment (the CLI's composition root reads it). */
export interface WhyEnv {
  /** ACKCRAWL_TOKEN */
  token?: string | undefined;
  /** ACKCRAWL_DATA_DIR: where a scheduler on this machine keeps its token file. */
  dataDir: string;
  /** ACKCRAWL_SCHEDULER_API */
  schedulerApi?: string | undefined;
}

/**
 * `ackcrawl why URL`: asks a running scheduler (`--scheduler`, or the one an embedded crawl in
 * `--out` is running), or, when none runs, reads the embedded crawl's frontier file in `--out`.
 * A cluster scheduler is asked with `--token`, ACKCRAWL_TOKEN or its token file; an embedded one
 * with the one-time token its `--out` folder holds.
 */
export async function why(url: string, options: WhyOptions, env: WhyEnv): Promise<WhyAnswer> {
  const out = options.out === undefined ? undefined : resolve(options.out);
  const running = out ? runningScheduler(out) : null;
  const api = options.scheduler ?? running?.api ?? env.schedulerApi;
  if (api) {
    const token =
      options.token ??
      (api === running?.api ? running.token : undefined) ??
      clientToken(env.token, env.dataDir);
    try {
      return await ask(api, token, url);
    } catch (err) {
      if (!out || options.scheduler) throw err;
      // The embedded crawl ended (or was killed): its files still tell.
    }
  }
  if (!out) {
    throw new InvalidInputError(
      'WHY_NO_SOURCE',
      'say where the crawl is: --scheduler http://host:port (a running scheduler) or --out DIR (an embedded crawl)',
    );
  }
  return fromFiles(out, url);
}

async function ask(api: string, token: string, url: string): Promise<WhyAnswer> {
  const target = new URL('/why', api);
  target.searchParams.set('url', url);
  const res = await fetch(target, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as WhyAnswer & { error?: { code: string; message: string } };
  if (!res.ok) {
    throw new InvalidInputError(
      toErrorCode(body.error?.code, httpStatusCode(res.status)),
      body.error?.message ?? res.statusText,
    );
  }
  return body;
}

async function fromFiles(out: string, url: string): Promise<WhyAnswer> {
  const frontierPath = join(out, 'frontier.sqlite');
  if (!existsSync(frontierPath)) {
    throw new InvalidInputError(
      'WHY_NO_CRAWL',
      `no crawl in ${out} (no frontier.sqlite): was it the --out of a crawl?`,
    );
  }
  const scope = readJob(join(out, 'job.json'));
  const frontier = openSqliteFrontier({ path: frontierPath, durability: 'normal' });
  try {
    return await explainUrl(url, {
      clock: Date.now,
      scopeProblem: (u) => scope?.problem(u) ?? null,
      frontier,
      locate: () => null,
      crawlerOf: () => null,
    });
  } finally {
    await frontier.close();
  }
}

/**
 * The scope of the crawl in job.json (a scheduler's on a SQLite frontier): `{ version: 2, settings }`,
 * or the settings themselves (version 1). Null when there is none or it cannot be read: the scope
 * is then not known, and not claimed.
 */
function readJob(path: string): CrawlScope | null {
  if (!existsSync(path)) return null;
  try {
    const file = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    const settings = (isRecord(file.settings) ? file.settings : file) as Record<string, unknown>;
    const seeds = strings(settings.seeds);
    if (seeds.length === 0) return null;
    const scope = SCOPE_MODES.find((mode) => mode === settings.scope) ?? 'host';
    return crawlScopeOf({
      scope,
      seeds,
      includeUrls: strings(settings.includeUrls),
      excludeUrls: strings(settings.excludeUrls),
    });
  } catch {
    return null;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
