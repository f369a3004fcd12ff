/**
 * `npm run bench`: crawls a generated site (run in its own process) with ackcrawl and with two
 * references, Crawlee's CheerioCrawler and a bare fetch-and-parse loop, one after the other, and
 * reports throughput, CPU and peak memory of each runner's whole process tree. Ratios are always
 * against references measured in the same run, on the same machine.
 *
 *   npm run bench -- [--pages 20000] [--only ackcrawl,crawlee,bare] [--ack-processes 2]
 *     [--ack-concurrency 32] [--crawlee-concurrency 200 | 20,50,100,200] [--bare-concurrency 64]
 *     [--cluster] [--timeout-s 900] [--verbose]
 *
 * Prints a table, then one JSON line with every figure, also written to .bench/last.json. Exits 1
 * if a runner failed or did not crawl exactly the site's pages.
 *
 * `--cluster [--cluster-processes 2 | 2,3] [--cluster-profile-dir DIR]` adds the distributed path
 * right after the embedded run: a scheduler and an agent on the RabbitMQ, Kafka and MinIO of
 * scripts/services.sh (which must be up), measured from submit to completion, with the brokers'
 * CPU beside it and the ratio to the embedded run (see cluster-runner.ts).
 *
 * `--redirects` crawls a site whose links lead through same-host 301s, with ackcrawl obeying
 * robots.txt (every hop asked of the scheduler) and with --no-robots, and prints what asking costs
 * (redirect-cost.ts).
 *
 * `--hosts` runs the many-slow-hosts bench instead (hosts/main.ts): 128 loopback hosts answering after
 * 50–200 ms, each checking the crawl's politeness, and every runner held against the ceiling that
 * politeness and latency allow.
 *
 * `--http-client [--requests 10000] [--rounds 5]` measures what one request costs the crawler's
 * process with node:http, got and the crawler's Fetcher (http-client/main.ts).
 *
 * `--extract [--rounds 20]` measures the cleaner instead (extract/main.ts, docs/extract.md): main-
 * text F1 against trafilatura on labelled real pages, and pages cleaned per CPU-second.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';
import { warmKafka } from './cluster-resources.js';
import { measureClusterRunner } from './cluster-runner.js';
import { extractBenchMain } from './extract/main.js';
import { hostsBenchMain } from './hosts/main.js';
import { httpClientBenchMain } from './http-client/main.js';
import { measureRunner } from './measure-runner.js';
import { BENCH_USAGE, parseBenchOptions, type BenchOptions } from './options.js';
import { optionsOrExit } from './options-error.js';
import {
  addRatios,
  formatTable,
  machineLoad,
  skippedResult,
  targetVerdicts,
  type RunnerResult,
} from './report.js';
import { redirectCost } from './redirect-cost.js';
import { planRunners } from './runners.js';
import { startSiteProcess } from './site-process.js';
import { warmSite, WARM_UP_PAGES } from './warm-site.js';

if (process.argv.includes('--extract')) process.exit(await extractBenchMain(process.argv.slice(2)));
if (process.argv.includes('--hosts')) process.exit(await hostsBenchMain(process.argv.slice(2)));
if (process.argv.includes('--http-client')) process.exit(await httpClientBenchMain(process.argv.slice(2)));

const argv = process.argv.slice(2);
const parsed = optionsOrExit('bench', BENCH_USAGE, argv, () => parseBenchOptions(argv));
if ('exitCode' in parsed) process.exit(parsed.exitCode);
const options: BenchOptions = parsed.options;
const say = (text: string): void => void process.stderr.write(`${text}\n`);
/** Kafka's warm-up: about three 20,000-page cluster crawls' worth of records (cluster-resources.ts). */
const WARM_UP_RECORDS = 60_000;
const WARM_UP_RECORD_BYTES = 12 * 1024;

const site = await startSiteProcess({
  pages: options.pages,
  seed: options.seed,
  redirectLinks: options.redirects,
  // A Disallow line (for a path no page is under) makes the crawl that obeys robots.txt ask the
  // scheduler before every hop; a host whose rules disallow nothing is not asked about.
  ...(options.redirects ? { disallow: '/private/' } : {}),
});
say(`site: ${site.url} (${options.pages} pages, pid ${site.pid}, not counted in the figures)`);
await warmSite(site, options.pages);
say(`site: warmed up with its first ${Math.min(options.pages, WARM_UP_PAGES)} pages, before any runner`);
const plan = planRunners(options, site.url);
if (plan.some((spec) => spec.cluster && !spec.skip) && !options.coldBrokers) {
  await warmKafka(WARM_UP_RECORDS, WARM_UP_RECORD_BYTES).then(
    (seconds) =>
      say(
        `kafka: warmed up with ${WARM_UP_RECORDS} records of ${WARM_UP_RECORD_BYTES / 1024} KB in ${seconds.toFixed(1)} s, before the cluster runs (--cold-brokers skips it)`,
      ),
    (err: unknown) =>
      say(
        `kafka: the warm-up failed (${err instanceof Error ? err.message : String(err)}); the cluster runs start cold`,
      ),
  );
}

const results: RunnerResult[] = [];
try {
  for (const spec of plan) {
    if (spec.skip) {
      say(`${spec.name}: skipped, ${spec.skip}`);
      results.push(skippedResult(spec));
      continue;
    }
    say(`${spec.name}: running…`);
    const r = spec.cluster
      ? await measureClusterRunner({ ...spec, cluster: spec.cluster }, site, options)
      : await measureRunner(spec, site, options);
    say(`${spec.name}: ${r.status}, ${r.pages} pages in ${r.seconds} s${r.problem ? ` (${r.problem})` : ''}`);
    results.push(r);
  }
} finally {
  await site.close();
}

addRatios(results);
// The targets are for the plain site; a redirect run answers what asking for each hop costs.
const targets = options.redirects ? [] : targetVerdicts(results);
const redirects = options.redirects ? redirectCost(results) : null;
const report = {
  at: new Date().toISOString(),
  pages: options.pages,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
  options,
  results,
  targets,
  ...(redirects ? { redirects } : {}),
};
process.stdout.write(`\n${formatTable(results)}\n\n`);
for (const t of targets) process.stdout.write(`${t.text}\n`);
if (options.redirects) {
  process.stdout.write(`${redirects?.text ?? 'redirects: a run failed, so there is no comparison'}\n`);
}
for (const r of results) {
  const load = machineLoad(r, cpus().length);
  if (load) process.stdout.write(`${load}\n`);
}
for (const r of results) {
  if (r.status !== 'ok' || r.kind !== 'ackcrawl' || r.peakPssMb === null) continue;
  process.stdout.write(
    `${r.runner} peak PSS = ${r.peakPssMb} MB (pages shared between processes, node's code above all, counted once; the target is on the RSS sum)\n`,
  );
}
for (const r of results) {
  if (r.startPagesPerSecond == null || r.endPagesPerSecond == null) continue;
  process.stdout.write(
    `${r.runner}: ${r.startPagesPerSecond} pages/s over the first 10 % of pages, ${r.endPagesPerSecond} over the last 10 %\n`,
  );
}
for (const r of results) {
  if (!r.cluster || r.cluster.kafkaLogBytes === null || r.pages === 0) continue;
  const { kafkaLogBytes, kafkaCompression } = r.cluster;
  process.stdout.write(
    `${r.runner}: Kafka stored ${(kafkaLogBytes / 1e6).toFixed(1)} MB, ${(kafkaLogBytes / r.pages / 1024).toFixed(1)} KB per page (compression: ${kafkaCompression})\n`,
  );
}
for (const r of results) {
  if (!r.processes || r.processes.length === 0) continue;
  const parts = r.processes.map(
    (p) =>
      `${p.label} ${p.cpuSeconds.toFixed(1)} CPU-s, ${p.rssAtTreePeakMb.toFixed(0)} MB (own peak ${p.peakRssMb.toFixed(0)})`,
  );
  process.stdout.write(`${r.runner} by process, RSS at the tree's peak: ${parts.join('; ')}\n`);
}
process.stdout.write(
  'pages/s = pages / wall time of the whole process tree; CPU and RSS cover every process of the tree,\n' +
    'not the site (its own process). What each keeps: ' +
    results.map((r) => `${r.runner}: ${r.keeps}`).join('; ') +
    '.\n' +
    (options.cluster
      ? 'Cluster rows: seconds from submit to completion; CPU and RSS of the crawl CLI, scheduler, agent and\n' +
        'crawlers (start-up included); services CPU = RabbitMQ + Kafka + MinIO over the same window, not in CPU s.\n'
      : ''),
);
process.stdout.write(`${JSON.stringify(report)}\n`);
const dir = join(repoRoot, '.bench');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'last.json'), `${JSON.stringify(report, null, 2)}\n`);
process.exitCode = results.some((r) => r.status === 'failed') ? 1 : 0;
