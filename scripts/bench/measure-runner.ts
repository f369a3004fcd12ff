import { round, type ProcessFigures, type RunnerResult } from './report.js';
import { runMeasured, type MeasuredRun } from './run-measured.js';
import type { ProcessUsage } from './tree-monitor.js';
import { edgeRates, RateSampler } from './rate-sampler.js';
import type { RunnerSpec } from './runners.js';
import type { SiteProcess } from './site-process.js';
import type { SiteStats } from '../site/generated-site.js';
import { markSiteCpu } from './site-cpu.js';

export interface MeasureOptions {
  pages: number;
  timeoutMs: number;
  verbose: boolean;
}

/**
 * Runs one runner against the site and checks it crawled the whole site: its own report and the
 * site's count of distinct pages served must both equal the site's page count.
 */
export async function measureRunner(
  spec: RunnerSpec,
  site: SiteProcess,
  o: MeasureOptions,
): Promise<RunnerResult> {
  await site.resetStats();
  const sampler = new RateSampler(() => site.stats());
  const siteCpu = markSiteCpu(site.pid);
  const run = await runPrepared(spec, o);
  const siteCpuSeconds = siteCpu();
  const edges = edgeRates(await sampler.stop(), o.pages);
  return {
    ...toRunnerResult(spec, run, await site.stats(), o),
    siteCpuSeconds,
    startPagesPerSecond: edges.start,
    endPagesPerSecond: edges.end,
  };
}

/** Prepares the runner (its files), runs it measured, and cleans up after it whatever happened. */
export async function runPrepared(
  spec: Pick<RunnerSpec, 'prepare'>,
  o: Pick<MeasureOptions, 'timeoutMs' | 'verbose'>,
): Promise<MeasuredRun> {
  const { args, cleanup } = spec.prepare();
  try {
    return await runMeasured({
      command: process.execPath,
      args,
      timeoutMs: o.timeoutMs,
      inheritStderr: o.verbose,
    });
  } finally {
    cleanup();
  }
}

/**
 * The figures of one measured run, checked for completeness: the runner's own report and the
 * site's count of distinct pages served must both equal the site's page count. `problems` are
 * further reasons the run failed, found by the caller.
 */
export function toRunnerResult(
  spec: Pick<RunnerSpec, 'name' | 'kind' | 'keeps'>,
  run: MeasuredRun,
  served: SiteStats,
  o: MeasureOptions,
  found: readonly string[] = [],
): RunnerResult {
  const problems = [...found];
  const pages = typeof run.summary?.['pages'] === 'number' ? run.summary['pages'] : 0;
  const reported = run.summary?.['pagesPerSecond'];

  if (run.timedOut) problems.push(`timed out after ${o.timeoutMs / 1000} s`);
  if (run.exitCode !== 0) problems.push(`exit code ${run.exitCode ?? run.signal}`);
  if (!run.summary) problems.push('printed no JSON summary');
  if (pages !== o.pages) problems.push(`reported ${pages} pages, expected ${o.pages}`);
  if (served.distinctPages !== o.pages) problems.push(`site served ${served.distinctPages} distinct pages`);
  if (problems.length > 0 && run.stderrTail) problems.push(`stderr tail:\n${run.stderrTail}`);

  return {
    runner: spec.name,
    kind: spec.kind,
    status: problems.length === 0 ? 'ok' : 'failed',
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
    keeps: spec.keeps,
    pages,
    sitePages: served.distinctPages,
    siteRequests: served.requests,
    ...(served.redirects > 0 ? { siteRedirects: served.redirects } : {}),
    seconds: round(run.wallSeconds, 2),
    pagesPerSecond: round(pages / run.wallSeconds, 1),
    reportedPagesPerSecond: typeof reported === 'number' ? reported : null,
    cpuSeconds: round(run.cpuSeconds, 2),
    sampledCpuSeconds: round(run.sampledCpuSeconds, 2),
    reapedCpuSeconds: round(run.reapedCpuSeconds, 2),
    cpuMsPerPage: pages > 0 ? round((run.cpuSeconds * 1000) / pages, 3) : 0,
    peakRssMb: round(run.peakRssBytes / 1024 / 1024, 1),
    peakPssMb: run.peakPssBytes === null ? null : round(run.peakPssBytes / 1024 / 1024, 1),
    peakProcesses: run.peakProcesses,
    ...(spec.kind === 'ackcrawl' ? { processes: processFigures(run.processes) } : {}),
    ratioVsCrawlee: null,
    ratioVsBare: null,
    ratioVsEmbedded: null,
  };
}

/** The tree's processes, largest CPU first; processes that used under 0.05 CPU-s are left out. */
function processFigures(processes: readonly ProcessUsage[]): ProcessFigures[] {
  const mb = (bytes: number): number => round(bytes / 1024 / 1024, 1);
  return processes
    .filter((p) => p.cpuSeconds >= 0.05)
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
    .map((p) => ({
      label: p.label,
      cpuSeconds: round(p.cpuSeconds, 2),
      peakRssMb: mb(p.peakRssBytes),
      rssAtTreePeakMb: mb(p.rssAtTreePeakBytes),
    }));
}
