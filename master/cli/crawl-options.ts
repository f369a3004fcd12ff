import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InvalidInputError } from '../../shared/errors.js';
import { hostPatternSchema } from '../../shared/url/host-patterns.js';
import {
  DEFAULT_MAX_LINKS_PER_PAGE,
  DEFAULT_MAX_URL_LENGTH,
  MAX_LINKS_PER_PAGE_LIMIT,
  MAX_URL_LENGTH_LIMIT,
} from '../../shared/protocol/link-limits.js';
import { normalizeProxyUrl, proxyUrlProblem } from '../../shared/protocol/proxy-url.js';
import { normalizeUrl } from '../../shared/url/normalize.js';
import { defaultCharsetSchema } from '../../shared/protocol/charset-label.js';
import { parseHostRules, type HostRule } from '../../shared/politeness/host-rules.js';

/** `ackcrawl crawl` options as commander hands them over (strings until validated). */
export interface RawCrawlOptions {
  out: string;
  maxPages?: string;
  maxDepth?: string;
  processes: string;
  concurrency: string;
  scope: string;
  hostConcurrency: string;
  hostDelay: string;
  hostRule?: string[];
  adaptiveDelay?: boolean;
  maxCrawlDelay?: string;
  retryDelay: string;
  allowPrivate?: boolean;
  json?: boolean;
  gzip?: boolean;
  /** `--user-agent`, repeatable: the first is the identity, two or more rotate. */
  userAgent?: string | string[];
  /** `--proxy`, repeatable. */
  proxy?: string[];
  verbose?: boolean;
  render?: boolean;
  renderHost?: string[];
  renderProcesses?: string;
  maxUrlLength?: string;
  maxLinksPerPage?: string;
  defaultCharset?: string;
  /** commander's `--no-robots` */
  robots?: boolean;
  sitemaps?: boolean;
}

export interface CrawlPlan {
  seeds: string[];
  outDir: string;
  maxPages: number;
  maxDepth: number;
  processes: number;
  concurrency: number;
  scope: 'host' | 'domain' | 'any';
  hostConcurrency: number;
  hostDelayMs: number;
  hostRules: HostRule[];
  adaptiveDelay: boolean;
  maxCrawlDelayMs: number;
  retryDelayMs: number;
  allowPrivate: boolean;
  json: boolean;
  gzip: boolean;
  userAgent: string | undefined;
  /** Rotation list (every --user-agent given, when more than one); empty: no rotation. */
  userAgents: string[];
  /** Proxy URLs, validated; empty: direct. */
  proxies: string[];
  verbose: boolean;
  /** `always` renders every page in a browser; `renderHosts` only those hosts' pages. */
  render: 'never' | 'always';
  renderHosts: string[];
  /** Render-capable crawler processes the embedded crawl starts when anything is rendered. */
  renderProcesses: number;
  maxUrlLength: number;
  maxLinksPerPage: number;
  defaultCharset: string | undefined;
  respectRobots: boolean;
  sitemaps: boolean;
}

function int(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  problems: string[],
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    problems.push(`--${name} must be an integer ≥ ${min}, not '${value}'`);
    return fallback;
  }
  return n;
}

function charset(label: string | undefined, problems: string[]): string | undefined {
  if (label === undefined) return undefined;
  const parsed = defaultCharsetSchema.safeParse(label);
  if (parsed.success) return parsed.data;
  problems.push(`--default-charset: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return undefined;
}

function hostRules(texts: readonly string[], problems: string[]): HostRule[] {
  const rules: HostRule[] = [];
  for (const text of texts) {
    try {
      rules.push(...parseHostRules(text));
    } catch (err) {
      problems.push(`--host-rule: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return rules;
}

/** Checks every option and seed at once; throws one InvalidInputError listing every problem. */
export function planCrawl(
  seedArgs: string[],
  raw: RawCrawlOptions,
  options: { needsOutDir?: boolean } = {},
): CrawlPlan {
  const problems: string[] = [];
  const seeds: string[] = [];
  if (seedArgs.length === 0)
    problems.push('give at least one seed URL, e.g. ackcrawl crawl https://example.com/');
  for (const seed of seedArgs) {
    try {
      seeds.push(normalizeUrl(seed));
    } catch (err) {
      problems.push(`seed '${seed}': ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const scope = raw.scope;
  if (scope !== 'host' && scope !== 'domain' && scope !== 'any') {
    problems.push(`--scope must be host, domain or any, not '${scope}'`);
  }
  const userAgents = [raw.userAgent ?? []].flat();
  if (userAgents.some((ua) => ua.trim() === '' || ua.length > 500 || /[\r\n]/.test(ua))) {
    problems.push('--user-agent must be one line of 1 to 500 characters');
  }
  const proxies: string[] = [];
  (raw.proxy ?? []).forEach((proxy, i) => {
    const problem = proxyUrlProblem(proxy);
    // The value itself is not repeated: it may hold a password.
    if (problem) problems.push(`--proxy #${i + 1}: ${problem}`);
    else proxies.push(normalizeProxyUrl(proxy));
  });
  const plan: CrawlPlan = {
    seeds,
    outDir: resolve(raw.out),
    maxPages: int('max-pages', raw.maxPages, 0, 1, problems),
    maxDepth: int('max-depth', raw.maxDepth, 0, 0, problems),
    processes: int('processes', raw.processes, 2, 1, problems),
    concurrency: int('concurrency', raw.concurrency, 32, 1, problems),
    scope: scope === 'domain' || scope === 'any' ? scope : 'host',
    hostConcurrency: int('host-concurrency', raw.hostConcurrency, 2, 1, problems),
    hostDelayMs: int('host-delay', raw.hostDelay, 500, 0, problems),
    hostRules: hostRules(raw.hostRule ?? [], problems),
    adaptiveDelay: raw.adaptiveDelay === true,
    maxCrawlDelayMs: int('max-crawl-delay', raw.maxCrawlDelay, 30_000, 0, problems),
    retryDelayMs: int('retry-delay', raw.retryDelay, 300_000, 0, problems),
    allowPrivate: raw.allowPrivate === true,
    json: raw.json === true,
    gzip: raw.gzip === true,
    userAgent: userAgents[0],
    userAgents: userAgents.length > 1 ? userAgents : [],
    proxies,
    verbose: raw.verbose === true,
    render: raw.render === true ? 'always' : 'never',
    renderHosts: [],
    renderProcesses: int('render-processes', raw.renderProcesses, 1, 1, problems),
    maxUrlLength: int('max-url-length', raw.maxUrlLength, DEFAULT_MAX_URL_LENGTH, 1, problems),
    maxLinksPerPage: int('max-links-per-page', raw.maxLinksPerPage, DEFAULT_MAX_LINKS_PER_PAGE, 1, problems),
    defaultCharset: charset(raw.defaultCharset, problems),
    respectRobots: raw.robots !== false,
    sitemaps: raw.sitemaps === true,
  };
  for (const pattern of raw.renderHost ?? []) {
    const parsed = hostPatternSchema.safeParse(pattern);
    if (parsed.success) plan.renderHosts.push(parsed.data.toLowerCase());
    else problems.push(`--render-host '${pattern}': ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  if (plan.maxUrlLength > MAX_URL_LENGTH_LIMIT) {
    problems.push(`--max-url-length must be at most ${MAX_URL_LENGTH_LIMIT}, not ${plan.maxUrlLength}`);
  }
  if (plan.maxLinksPerPage > MAX_LINKS_PER_PAGE_LIMIT) {
    problems.push(
      `--max-links-per-page must be at most ${MAX_LINKS_PER_PAGE_LIMIT}, not ${plan.maxLinksPerPage}`,
    );
  }
  if (problems.length === 0 && options.needsOutDir !== false) checkWritable(plan.outDir, problems);
  if (problems.length > 0) {
    throw new InvalidInputError('CRAWL_OPTIONS_INVALID', problems.join('\n'), { details: { problems } });
  }
  return plan;
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
