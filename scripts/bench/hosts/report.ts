import type { HostsSiteStats } from '../../site/hosts-site.js';
import { round, type RunnerResult } from '../report.js';
import type { Ceiling } from './ceiling.js';

/** The target: ackcrawl at least this share of the ceiling, with no violation. */
export const CEILING_TARGET_RATIO = 0.8;

export interface HostsFigures {
  /** From the site's clock: first request to any host → last page response of any host. */
  windowSeconds: number;
  /** pages / windowSeconds: what the ceiling is compared with. */
  pagesPerSecond: number;
  ratioToCeiling: number;
  /** Every request the hosts answered (pages, robots.txt, 404s). */
  requests: number;
  concurrencyViolations: number;
  delayViolations: number;
  hostsWithViolations: number;
  maxInFlight: number;
  minGapMs: number | null;
  /** Per host, in the plan's order: where the time went (mean start-to-start gap, first and last request). */
  perHost: { requests: number; meanGapMs: number | null; firstMs: number | null; lastMs: number | null }[];
}

export type HostsResult = RunnerResult & { hosts?: HostsFigures };

export function hostsFigures(stats: HostsSiteStats, pages: number, ceiling: Ceiling): HostsFigures {
  const sum = (pick: (h: HostsSiteStats['hosts'][number]) => number): number =>
    stats.hosts.reduce((total, h) => total + pick(h), 0);
  const gaps = stats.hosts.map((h) => h.minGapMs).filter((g): g is number => g !== null);
  const windowSeconds = (stats.windowMs ?? 0) / 1000;
  const pagesPerSecond = windowSeconds > 0 ? pages / windowSeconds : 0;
  return {
    windowSeconds: round(windowSeconds, 2),
    pagesPerSecond: round(pagesPerSecond, 1),
    ratioToCeiling: round(pagesPerSecond / ceiling.pagesPerSecond, 3),
    requests: sum((h) => h.requests),
    concurrencyViolations: sum((h) => h.concurrencyViolations),
    delayViolations: sum((h) => h.delayViolations),
    hostsWithViolations: stats.hosts.filter((h) => h.concurrencyViolations + h.delayViolations > 0).length,
    maxInFlight: Math.max(0, ...stats.hosts.map((h) => h.maxInFlight)),
    minGapMs: gaps.length > 0 ? round(Math.min(...gaps), 1) : null,
    perHost: stats.hosts.map((h) => ({
      requests: h.requests,
      meanGapMs: h.meanGapMs === null ? null : round(h.meanGapMs, 1),
      firstMs: h.firstAt === null ? null : Math.round(h.firstAt),
      lastMs: h.lastAt === null ? null : Math.round(h.lastAt),
    })),
  };
}

export interface HostsVerdict {
  ratio: number | null;
  violations: number | null;
  holds: boolean;
  text: string;
}

export function hostsVerdict(results: readonly HostsResult[]): HostsVerdict | undefined {
  const row = results.find((r) => r.kind === 'ackcrawl');
  if (!row) return undefined;
  const target = `target ≥ ${CEILING_TARGET_RATIO.toFixed(2)} with 0 violations`;
  if (row.status !== 'ok' || !row.hosts) {
    return {
      ratio: null,
      violations: null,
      holds: false,
      text: `ackcrawl / ceiling: not measured (${target})`,
    };
  }
  const { ratioToCeiling: ratio, concurrencyViolations, delayViolations } = row.hosts;
  const violations = concurrencyViolations + delayViolations;
  const holds = ratio >= CEILING_TARGET_RATIO && violations === 0;
  return {
    ratio,
    violations,
    holds,
    text: `ackcrawl / ceiling = ${ratio.toFixed(2)}, ${violations} violations (${target}): ${holds ? 'holds' : 'does NOT hold'}`,
  };
}

export function formatHostsTable(results: readonly HostsResult[]): string {
  const header = ['runner', 'pages', 'window s', 'pages/s', 'vs ceiling', 'conc. viol.', 'delay viol.'];
  header.push('min gap ms', 'max in flight', 'wall s', 'CPU s', 'peak RSS MB');
  const rows = results.map((r) => {
    const h = r.hosts;
    if (r.status === 'skipped' || !h) return [`${r.runner} (${r.status})`, ...header.slice(1).map(() => '-')];
    return [
      r.status === 'ok' ? r.runner : `${r.runner} (FAILED)`,
      String(r.pages),
      h.windowSeconds.toFixed(1),
      h.pagesPerSecond.toFixed(0),
      `${h.ratioToCeiling.toFixed(2)}x`,
      String(h.concurrencyViolations),
      String(h.delayViolations),
      h.minGapMs === null ? '-' : h.minGapMs.toFixed(1),
      String(h.maxInFlight),
      r.seconds.toFixed(1),
      r.cpuSeconds.toFixed(1),
      r.peakRssMb.toFixed(0),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
