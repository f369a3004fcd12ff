import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface CrawlSummaryOutput {
  pages: number;
  ok: number;
  failed: number;
  /** Of `ok`, pages an earlier crawl of the job already had and the server said were unchanged. */
  notModified: number;
  settledThisRun: number;
  durationMs: number;
  pagesPerSecond: number;
  /** Where the records are: a folder (embedded) or e.g. `kafka:ackcrawl.pages` (cluster). */
  out: string;
  files: string[];
}

/** The summary of a crawl whose records went to `out` (a folder, or e.g. `kafka:topic`). */
function toOutput(summary: Record<string, number>, out: string, files: string[]): CrawlSummaryOutput {
  return {
    pages: summary.pages ?? 0,
    ok: summary.ok ?? 0,
    failed: summary.failed ?? 0,
    notModified: summary.notModified ?? 0,
    settledThisRun: summary.settledThisRun ?? 0,
    durationMs: summary.durationMs ?? 0,
    pagesPerSecond: summary.pagesPerSecond ?? 0,
    out,
    files,
  };
}

export function buildSummary(summary: Record<string, number>, outDir: string): CrawlSummaryOutput {
  const files = readdirSync(outDir)
    .filter((name) => /^pages-\d+\.jsonl(\.gz)?$/.test(name))
    .sort()
    .map((name) => join(outDir, name));
  return toOutput(summary, outDir, files);
}

export function buildClusterSummary(summary: Record<string, number>, output: string): CrawlSummaryOutput {
  return toOutput(summary, output, []);
}

export function formatSummary(s: CrawlSummaryOutput): string {
  const records =
    s.files.length > 0 || !/^[a-z]+:/.test(s.out)
      ? `${s.files.length} file(s) in ${relative(process.cwd(), s.out) || '.'}/`
      : s.out;
  const resumed = s.settledThisRun < s.pages ? ` (${s.settledThisRun} in this run)` : '';
  return (
    `Crawl complete: ${s.pages} pages${resumed}, ${s.ok} ok` +
    `${s.notModified > 0 ? ` (${s.notModified} not modified)` : ''}, ${s.failed} failed, ` +
    `in ${(s.durationMs / 1000).toFixed(1)} s (${s.pagesPerSecond} pages/s). ` +
    `Records: ${records}`
  );
}

/** A crawl stopped at its time limit (`--max-duration`), with URLs left queued in `out`. */
export interface StoppedSummaryOutput {
  stoppedBy: 'time limit';
  timeLimitMs: number;
  pages: number;
  ok: number;
  failed: number;
  /** Accepted URLs not yet settled: queued, waiting for a retry, or handed back unfinished. */
  left: number;
  out: string;
  files: string[];
}

/** From the frontier's counters once the scheduler settled what was in flight. */
export function buildStoppedSummary(
  stats: Record<string, number>,
  timeLimitMs: number,
  outDir: string,
): StoppedSummaryOutput {
  const { files } = buildSummary({}, outDir);
  const ok = stats.done ?? 0;
  const failed = stats.failed ?? 0;
  return {
    stoppedBy: 'time limit',
    timeLimitMs,
    pages: ok + failed,
    ok,
    failed,
    left: (stats.ready ?? 0) + (stats.delayed ?? 0) + (stats.leased ?? 0),
    out: outDir,
    files,
  };
}

export function formatStoppedSummary(s: StoppedSummaryOutput): string {
  const where = relative(process.cwd(), s.out) || '.';
  return (
    `Crawl stopped at its time limit (${(s.timeLimitMs / 1000).toFixed(1)} s): ${s.pages} pages, ` +
    `${s.ok} ok, ${s.failed} failed; ${s.left} URLs left, kept in ${where}/ ` +
    `(the same command goes on with them). Records: ${s.files.length} file(s) in ${where}/`
  );
}
