/**
 * `npm run bench -- --hosts`: many slow hosts. A site of `--host-count` hosts (default 128), each
 * on its own loopback address (127.0.0.2, …) in one process of its own, answering after its own
 * latency (spread over 50–200 ms) and counting every request that breaks the crawl's politeness
 * (scripts/site/politeness-log.ts). ackcrawl, Crawlee and the bare loop crawl it one after the
 * other at the same total concurrency; each is held against the ceiling that the politeness and
 * the latencies allow (ceiling.ts).
 *
 *   npm run bench -- --hosts [--host-count 128] [--pages 16000] [--host-concurrency 1]
 *     [--host-delay 150] [--min-latency 50] [--max-latency 200] [--total-concurrency 256]
 *     [--ack-processes 2] [--tolerance-ms 5] [--page-bytes 10240] [--only ackcrawl,crawlee,bare]
 *     [--seed 1] [--timeout-s 900] [--verbose]
 *
 * pages/s is the site's: pages over the time from the first request any host got to the last page
 * any host served, so process start-up and shutdown are out of it, as they are out of the
 * ceiling. Prints a table and one JSON line, also written to .bench/hosts.json. Exits 1 if a
 * runner failed or did not crawl exactly the site's pages.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../paths.js';
import type { HostsSiteOptions, HostsSiteStats } from '../../site/hosts-site.js';
import { runPrepared, toRunnerResult } from '../measure-runner.js';
import { skippedResult } from '../report.js';
import { forkSite } from '../site-process.js';
import { crawlCeiling } from './ceiling.js';
import { HOSTS_BENCH_USAGE, parseHostsBenchOptions } from './options.js';
import { optionsOrExit } from '../options-error.js';
import { planHosts } from './plan.js';
import { formatHostsTable, hostsFigures, hostsVerdict, type HostsResult } from './report.js';
import { ENFORCES, planHostsRunners } from './runners.js';

export async function hostsBenchMain(argv: string[]): Promise<number> {
  const parsed = optionsOrExit('hosts bench', HOSTS_BENCH_USAGE, argv, () => parseHostsBenchOptions(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const say = (text: string): void => void process.stderr.write(`${text}\n`);
  const politeness = { concurrency: o.hostConcurrency, delayMs: o.hostDelayMs };
  const hosts = planHosts({ ...o, hosts: o.hostCount, politeness });
  const ceiling = crawlCeiling(hosts, politeness, o.totalConcurrency);
  const siteOptions: HostsSiteOptions = {
    hosts,
    politeness: { ...politeness, toleranceMs: o.toleranceMs },
    seed: o.seed,
    pageBytes: o.pageBytes,
    linksPerPage: 20,
  };
  const site = await forkSite<{ urls: string[] }, HostsSiteStats>('site/serve-hosts.js', [
    JSON.stringify(siteOptions),
  ]);
  const seeds = site.ready.urls;
  say(
    `site: ${hosts.length} hosts (${seeds[0]} … ${seeds.at(-1)}), ${ceiling.pages} pages, pid ${site.pid}, ` +
      'not counted in the figures',
  );
  const measure = { pages: ceiling.pages, timeoutMs: o.timeoutMs, verbose: o.verbose };
  const results: HostsResult[] = [];
  try {
    for (const spec of planHostsRunners(o, seeds)) {
      if (spec.skip) {
        say(`${spec.name}: skipped, ${spec.skip}`);
        results.push(skippedResult(spec));
        continue;
      }
      say(`${spec.name}: running…`);
      await site.resetStats();
      const run = await runPrepared(spec, measure);
      const stats = await site.stats();
      const served = {
        requests: stats.hosts.reduce((n, h) => n + h.requests, 0),
        pageResponses: stats.hosts.reduce((n, h) => n + h.pageResponses, 0),
        distinctPages: stats.hosts.reduce((n, h) => n + h.distinctPages, 0),
        redirects: 0,
      };
      const r: HostsResult = toRunnerResult(spec, run, served, measure);
      r.hosts = hostsFigures(stats, served.distinctPages, ceiling);
      say(
        `${spec.name}: ${r.status}, ${r.pages} pages, ${r.hosts.pagesPerSecond} pages/s${r.problem ? ` (${r.problem})` : ''}`,
      );
      results.push(r);
    }
  } finally {
    await site.close();
  }

  const verdict = hostsVerdict(results);
  const latencies = hosts.map((h) => h.latencyMs);
  const report = {
    at: new Date().toISOString(),
    mode: 'hosts',
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
    options: o,
    hosts: hosts.map((h, i) => ({ ...h, url: seeds[i] })),
    ceiling,
    results,
    ...(verdict ? { ceilingTarget: verdict } : {}),
  };
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  out('');
  out(
    `${hosts.length} hosts answering after ${Math.min(...latencies)}–${Math.max(...latencies)} ms; politeness: ` +
      `${o.hostConcurrency} in flight per host, ${o.hostDelayMs} ms between request starts (the site allows ` +
      `${o.toleranceMs} ms of clock slack); ${o.totalConcurrency} requests in flight at most over all hosts.`,
  );
  out(
    `ceiling: ${ceiling.pagesPerSecond.toFixed(0)} pages/s (${ceiling.pages} pages in ${(ceiling.makespanMs / 1000).toFixed(1)} s, ` +
      `bound by ${ceiling.bound}; total concurrency alone would allow ${(ceiling.concurrencyMs / 1000).toFixed(1)} s; ` +
      `Σ per-host rates ${ceiling.steadyPagesPerSecond.toFixed(0)} pages/s)`,
  );
  out('');
  out(formatHostsTable(results));
  out('');
  if (verdict) out(verdict.text);
  out(
    "pages/s = distinct pages / the site's window (first request → last page served); wall s, CPU and RSS are\n" +
      "of the runner's whole process tree, start-up included. Violations are requests (robots.txt included)\n" +
      "that arrived with the host's limit already in flight, or sooner after the previous start than the\n" +
      `delay less the slack. Politeness enforced: ${results.map((r) => `${r.runner}: ${ENFORCES[r.kind] ?? '?'}`).join('; ')}.`,
  );
  out(JSON.stringify(report));
  const dir = join(repoRoot, '.bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hosts.json'), `${JSON.stringify(report, null, 2)}\n`);
  return results.some((r) => r.status === 'failed') ? 1 : 0;
}
