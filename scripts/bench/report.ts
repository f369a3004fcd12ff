import type { RunnerKind } from './runners.js';

export interface RunnerResult {
  runner: string;
  kind: RunnerKind;
  status: 'ok' | 'failed' | 'skipped';
  problem?: string;
  keeps: string;
  /** Pages the runner reports crawled successfully. */
  pages: number;
  /** Distinct site pages the site served to it, and all requests it answered. */
  sitePages: number;
  siteRequests: number;
  seconds: number;
  /** pages / wall seconds of the whole process tree, start-up and shutdown included. */
  pagesPerSecond: number;
  /** The runner's own figure, timed inside the process. */
  reportedPagesPerSecond: number | null;
  cpuSeconds: number;
  sampledCpuSeconds: number;
  reapedCpuSeconds: number;
  cpuMsPerPage: number;
  peakRssMb: number;
  peakProcesses: number;
  ratioVsCrawlee: number | null;
  ratioVsBare: number | null;
}

export function skippedResult(spec: { name: string; kind: RunnerKind; skip?: string }): RunnerResult {
  return {
    runner: spec.name,
    kind: spec.kind,
    status: 'skipped',
    problem: spec.skip ?? 'not runnable',
    keeps: '-',
    ...{
      pages: 0,
      sitePages: 0,
      siteRequests: 0,
      seconds: 0,
      pagesPerSecond: 0,
      reportedPagesPerSecond: null,
    },
    ...{ cpuSeconds: 0, sampledCpuSeconds: 0, reapedCpuSeconds: 0, cpuMsPerPage: 0 },
    ...{ peakRssMb: 0, peakProcesses: 0, ratioVsCrawlee: null, ratioVsBare: null },
  };
}

/** Sets the ratios against the references measured in this run (the fastest Crawlee setting). */
export function addRatios(results: RunnerResult[]): void {
  const best = (kind: RunnerKind): number | undefined => {
    const rates = results.filter((r) => r.kind === kind && r.status === 'ok').map((r) => r.pagesPerSecond);
    return rates.length > 0 ? Math.max(...rates) : undefined;
  };
  const crawlee = best('crawlee');
  const bare = best('bare');
  for (const r of results) {
    if (r.status !== 'ok') continue;
    r.ratioVsCrawlee = crawlee ? round(r.pagesPerSecond / crawlee, 2) : null;
    r.ratioVsBare = bare ? round(r.pagesPerSecond / bare, 2) : null;
  }
}

export function formatTable(results: RunnerResult[]): string {
  const header = ['runner', 'pages', 'seconds', 'pages/s', 'CPU s', 'CPU ms/page', 'peak RSS MB'];
  header.push('vs Crawlee', 'vs bare');
  const rows = results.map((r) =>
    r.status === 'skipped'
      ? [`${r.runner} (skipped)`, ...header.slice(1).map(() => '-')]
      : [
          r.status === 'ok' ? r.runner : `${r.runner} (FAILED)`,
          String(r.pages),
          r.seconds.toFixed(1),
          r.pagesPerSecond.toFixed(0),
          r.cpuSeconds.toFixed(1),
          r.cpuMsPerPage.toFixed(2),
          r.peakRssMb.toFixed(0),
          ratio(r.ratioVsCrawlee),
          ratio(r.ratioVsBare),
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function ratio(value: number | null): string {
  return value === null ? '-' : `${value.toFixed(2)}x`;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
