import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ackcrawlCli, ackcrawlCliBuilt, compiledScript } from '../paths.js';
import type { BenchOptions } from './options.js';

export type RunnerKind = 'ackcrawl' | 'crawlee' | 'bare';

export interface RunnerSpec {
  name: string;
  kind: RunnerKind;
  /** What it keeps once it has crawled a page; printed next to the figures. */
  keeps: string;
  /** Why it cannot run, if it cannot. */
  skip?: string;
  /** Called just before the run (the ackcrawl runner makes its output folder here). */
  prepare(): { args: string[]; cleanup(): void };
}

/**
 * The runs, in the order of `--only`. No runner gets a page limit: the site is finite, and a
 * limit distorts Crawlee. With maxRequestsPerCrawl set, enqueueLinks adds links in batches no larger
 * than the remaining budget and sleeps 1 s between batches, awaited by the request handler; the
 * budget only counts new URLs, so near the end every page takes seconds (3,000 pages: 17 s without
 * a limit, 190-310 s with it).
 */
export function planRunners(o: BenchOptions, url: string): RunnerSpec[] {
  const plan: RunnerSpec[] = [];
  for (const kind of o.only) {
    if (kind === 'ackcrawl') {
      plan.push(ackcrawl(o, url, false));
      if (o.cluster && ackcrawlSupportsCluster()) plan.push(ackcrawl(o, url, true));
    }
    if (kind === 'crawlee') {
      const sweep = o.crawleeConcurrency.length > 1;
      for (const c of o.crawleeConcurrency) plan.push(crawlee(url, c, sweep));
    }
    if (kind === 'bare') plan.push(bare(url, o.bareConcurrency));
  }
  return plan;
}

function ackcrawl(o: BenchOptions, url: string, cluster: boolean): RunnerSpec {
  return {
    name: cluster ? 'ackcrawl-cluster' : 'ackcrawl',
    kind: 'ackcrawl',
    keeps: 'every page with its body, durably on disk',
    ...(ackcrawlCliBuilt() ? {} : { skip: 'dist/master/cli/main.js is not built yet' }),
    prepare() {
      const out = mkdtempSync(join(tmpdir(), 'ackcrawl-bench-'));
      const args = [ackcrawlCli, 'crawl', url, '--out', out];
      args.push('--processes', String(o.ackProcesses), '--concurrency', String(o.ackConcurrency));
      args.push('--host-concurrency', '1000', '--host-delay', '0', '--allow-private', '--json');
      if (cluster) args.push('--cluster');
      return { args, cleanup: () => rmSync(out, { recursive: true, force: true }) };
    },
  };
}

function crawlee(url: string, concurrency: number, sweep: boolean): RunnerSpec {
  return {
    name: sweep ? `crawlee@${concurrency}` : 'crawlee',
    kind: 'crawlee',
    keeps: 'nothing durable (in-memory request queue, no dataset)',
    prepare: () => ({
      args: [compiledScript('bench/crawlee-runner.js'), '--url', url, '--concurrency', String(concurrency)],
      cleanup: () => undefined,
    }),
  };
}

function bare(url: string, concurrency: number): RunnerSpec {
  return {
    name: 'bare',
    kind: 'bare',
    keeps: 'nothing (in-memory Set)',
    prepare: () => ({
      args: [compiledScript('bench/bare-runner.js'), '--url', url, '--concurrency', String(concurrency)],
      cleanup: () => undefined,
    }),
  };
}

/** Whether the built CLI's `crawl --help` mentions `--cluster`. */
export function ackcrawlSupportsCluster(): boolean {
  if (!ackcrawlCliBuilt()) return false;
  const help = spawnSync(process.execPath, [ackcrawlCli, 'crawl', '--help'], { encoding: 'utf8' });
  return `${help.stdout}${help.stderr}`.includes('--cluster');
}
