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
  /** A distributed run: the command is `crawl --cluster`, submitted to a cluster started for it. */
  cluster?: { processes: number };
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
  if (o.redirects) return [ackcrawl(o, url), ackcrawl(o, url, { noRobots: true })];
  for (const kind of o.only) {
    if (kind === 'ackcrawl') {
      plan.push(ackcrawl(o, url));
      const sweep = o.clusterProcesses.length > 1;
      if (o.cluster) for (const n of o.clusterProcesses) plan.push(ackcrawlCluster(url, n, sweep));
    }
    if (kind === 'crawlee') {
      const sweep = o.crawleeConcurrency.length > 1;
      for (const c of o.crawleeConcurrency) plan.push(crawlee(url, c, sweep));
    }
    if (kind === 'bare') plan.push(bare(url, o.bareConcurrency));
  }
  return plan;
}

/** The embedded crawl; `noRobots`: with --no-robots, so that no redirect is asked of the scheduler. */
function ackcrawl(o: BenchOptions, url: string, variant: { noRobots?: boolean } = {}): RunnerSpec {
  return {
    name: variant.noRobots ? 'ackcrawl --no-robots' : 'ackcrawl',
    kind: 'ackcrawl',
    keeps: 'every page with its body, durably on disk',
    ...(ackcrawlCliBuilt() ? {} : { skip: 'dist/master/cli/main.js is not built yet' }),
    prepare() {
      const out = mkdtempSync(join(tmpdir(), 'ackcrawl-bench-'));
      const args = [ackcrawlCli, 'crawl', url, '--out', out];
      args.push('--processes', String(o.ackProcesses), '--concurrency', String(o.ackConcurrency));
      args.push('--host-concurrency', '1000', '--host-delay', '0', '--allow-private', '--json');
      if (variant.noRobots) args.push('--no-robots');
      return { args, cleanup: () => rmSync(out, { recursive: true, force: true }) };
    },
  };
}

/** The crawl CLI's side of a cluster run; cluster-runner.ts starts the cluster it submits to. */
function ackcrawlCluster(url: string, processes: number, sweep: boolean): RunnerSpec {
  return {
    name: sweep ? `ackcrawl-cluster@${processes}` : 'ackcrawl-cluster',
    kind: 'ackcrawl',
    keeps: 'every page with its body in Kafka (acks: all), URLs in RabbitMQ',
    cluster: { processes },
    ...(ackcrawlCliBuilt() ? {} : { skip: 'dist/master/cli/main.js is not built yet' }),
    prepare: () => ({
      args: [ackcrawlCli, 'crawl', '--cluster', url, '--allow-private', '--json'].concat([
        '--host-concurrency',
        '1000',
        '--host-delay',
        '0',
      ]),
      cleanup: () => undefined,
    }),
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
