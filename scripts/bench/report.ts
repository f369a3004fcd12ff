import type { KafkaCompression } from '../../shared/adapters/page-sink/kafka-compression.js';
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
  /** The site's 301s of `/r/n` links (a `--redirects` run); absent where it served none. */
  siteRedirects?: number;
  seconds: number;
  /** pages / wall seconds of the whole process tree, start-up and shutdown included. */
  pagesPerSecond: number;
  /** The runner's own figure, timed inside the process. */
  reportedPagesPerSecond: number | null;
  /** Pages/s over the first and the last 10 % of the pages (rate-sampler.ts); absent on cluster rows. */
  startPagesPerSecond?: number | null;
  endPagesPerSecond?: number | null;
  cpuSeconds: number;
  sampledCpuSeconds: number;
  reapedCpuSeconds: number;
  cpuMsPerPage: number;
  /**
   * CPU the site's process used while the runner ran (serving its pages), not in cpuSeconds; null
   * or absent where it was not read.
   */
  siteCpuSeconds?: number | null;
  peakRssMb: number;
  /**
   * The tree's peak sum of PSS: each shared page (node's code, mapped by every Node process) counted
   * once, where peakRssMb counts it once per process. Null where /proc gives no PSS.
   */
  peakPssMb: number | null;
  peakProcesses: number;
  /** Per process of the tree (ackcrawl runners): where its CPU and its peak RSS went. */
  processes?: ProcessFigures[];
  ratioVsCrawlee: number | null;
  ratioVsBare: number | null;
  /** Distributed / embedded ackcrawl in this run; set on cluster rows only. */
  ratioVsEmbedded: number | null;
  /** Present on a cluster run: the figures only the distributed path has. */
  cluster?: ClusterFigures;
}

export interface ProcessFigures {
  label: string;
  cpuSeconds: number;
  peakRssMb: number;
  /** Its RSS at the moment the tree's sum peaked. */
  rssAtTreePeakMb: number;
}

export interface ClusterFigures {
  crawlerProcesses: number;
  /** The scheduler's own share of cpuSeconds: one JS thread that every page passes through. */
  schedulerCpuSeconds: number;
  /** CPU the brokers spent from submit to completion (RabbitMQ, Kafka, MinIO), not in cpuSeconds. */
  servicesCpuSeconds: number;
  servicesCpuByService: Record<string, number>;
  /** Records in the topic after the crawl (at-least-once: may exceed pages), and distinct keys. */
  kafkaRecords: number;
  kafkaDistinctKeys: number | null;
  kafkaCompression: KafkaCompression;
  /** Bytes of the topic's log segments on the broker's disk (kafka-log-bytes.ts); null: not found. */
  kafkaLogBytes: number | null;
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
    ...{
      peakRssMb: 0,
      peakPssMb: null,
      peakProcesses: 0,
      ratioVsCrawlee: null,
      ratioVsBare: null,
      ratioVsEmbedded: null,
    },
  };
}

/**
 * Sets the ratios against the references measured in this run (the fastest Crawlee setting), and
 * on cluster rows against the embedded ackcrawl run.
 */
export function addRatios(results: RunnerResult[]): void {
  const best = (keep: (r: RunnerResult) => boolean): number | undefined => {
    const rates = results.filter((r) => keep(r) && r.status === 'ok').map((r) => r.pagesPerSecond);
    return rates.length > 0 ? Math.max(...rates) : undefined;
  };
  const crawlee = best((r) => r.kind === 'crawlee');
  const bare = best((r) => r.kind === 'bare');
  const embedded = best((r) => r.kind === 'ackcrawl' && !r.cluster);
  for (const r of results) {
    if (r.status !== 'ok') continue;
    r.ratioVsCrawlee = crawlee ? round(r.pagesPerSecond / crawlee, 2) : null;
    r.ratioVsBare = bare ? round(r.pagesPerSecond / bare, 2) : null;
    if (r.cluster) r.ratioVsEmbedded = embedded ? round(r.pagesPerSecond / embedded, 2) : null;
  }
}

/** One of the targets the runs are held to (issue 12), measured in this run. */
export interface TargetVerdict {
  name: string;
  /** The measured figure, or null when a run it needs failed or was not run. */
  value: number | null;
  /** `min`: value ≥ target; `max`: value ≤ target. */
  bound: 'min' | 'max';
  target: number;
  holds: boolean;
  text: string;
}

/** The targets: ratios against references of the same run, and the process tree's peak memory. */
export const TARGETS = {
  embeddedVsBare: 1.0,
  embeddedVsCrawlee: 8,
  distributedVsEmbedded: 0.9,
  peakRssMb: 400,
} as const;

/** Each target whose runs were asked for (a ratio needs both rows), with its verdict. */
export function targetVerdicts(results: RunnerResult[]): TargetVerdict[] {
  const ok = results.filter((r) => r.status === 'ok');
  const embedded = results.find((r) => r.kind === 'ackcrawl' && !r.cluster);
  const embeddedOk = ok.find((r) => r === embedded);
  const clusters = results.filter((r) => r.cluster);
  const out: TargetVerdict[] = [];
  const add = (
    name: string,
    value: number | null,
    bound: 'min' | 'max',
    target: number,
    unit = 'x',
  ): void => {
    const holds = value !== null && (bound === 'min' ? value >= target : value <= target);
    const want = `${bound === 'min' ? '>=' : '<='} ${target}${unit}`;
    const text =
      value === null
        ? `${name}: not measured (a run failed or was skipped; target ${want})`
        : `${name} = ${value}${unit} (target ${want}): ${holds ? 'holds' : 'does NOT hold'}`;
    out.push({ name, value, bound, target, holds, text });
  };
  if (embedded && results.some((r) => r.kind === 'bare')) {
    add('embedded / bare', embeddedOk?.ratioVsBare ?? null, 'min', TARGETS.embeddedVsBare);
  }
  if (embedded && results.some((r) => r.kind === 'crawlee')) {
    add('embedded / Crawlee', embeddedOk?.ratioVsCrawlee ?? null, 'min', TARGETS.embeddedVsCrawlee);
  }
  if (embedded && clusters.length > 0) {
    const ratios = clusters.map((r) => r.ratioVsEmbedded).filter((x): x is number => x !== null);
    add(
      'distributed / embedded',
      ratios.length > 0 ? Math.max(...ratios) : null,
      'min',
      TARGETS.distributedVsEmbedded,
    );
  }
  for (const r of [embedded, ...clusters]) {
    if (r === undefined) continue;
    add(`${r.runner} peak RSS`, r.status === 'ok' ? r.peakRssMb : null, 'max', TARGETS.peakRssMb, ' MB');
  }
  return out;
}

export function formatTable(results: RunnerResult[]): string {
  const header = [
    'runner',
    'pages',
    'seconds',
    'pages/s',
    'CPU s',
    'CPU ms/page',
    'peak RSS MB',
    'peak PSS MB',
  ];
  header.push('vs Crawlee', 'vs bare', 'vs embedded', 'services CPU s', 'site CPU s');
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
          r.peakPssMb === null ? '-' : r.peakPssMb.toFixed(0),
          ratio(r.ratioVsCrawlee),
          ratio(r.ratioVsBare),
          ratio(r.ratioVsEmbedded),
          r.cluster ? r.cluster.servicesCpuSeconds.toFixed(1) : '-',
          r.siteCpuSeconds == null ? '-' : r.siteCpuSeconds.toFixed(1),
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * What a run cost the whole machine: the tree's CPU, the services' (cluster rows) and the site's,
 * against the cores its wall time offered. Near every core, the run was bound by the machine's CPU,
 * and its pages/s against another's is about the ratio of their costs. Null without the site's CPU.
 */
export function machineLoad(r: RunnerResult, cores: number): string | null {
  if (r.status !== 'ok' || r.siteCpuSeconds == null || r.seconds <= 0) return null;
  const services = r.cluster?.servicesCpuSeconds ?? 0;
  const total = r.cpuSeconds + services + r.siteCpuSeconds;
  const parts = [`tree ${r.cpuSeconds.toFixed(1)}`];
  if (r.cluster) parts.push(`services ${services.toFixed(1)}`);
  parts.push(`site ${r.siteCpuSeconds.toFixed(1)}`);
  return (
    `${r.runner}: the machine's CPU while it ran: ${parts.join(' + ')} = ${total.toFixed(1)} CPU-s ` +
    `in ${r.seconds.toFixed(1)} s, ${(total / r.seconds).toFixed(2)} of ${cores} cores`
  );
}

function ratio(value: number | null): string {
  return value === null ? '-' : `${value.toFixed(2)}x`;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
