import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../paths.js';
import { BenchOptionsError, optionsOrExit } from '../options-error.js';
import { LabelledPagesError } from './fixtures.js';
import {
  F1_RATIO_TARGET,
  PAGES_PER_CORE_TARGET,
  runExtractBench,
  type ExtractBenchReport,
} from './run-extract-bench.js';

/** What `npm run bench -- --extract --help` prints. */
export const EXTRACT_BENCH_USAGE = `usage: npm run bench -- --extract [--rounds N]

The cleaner (ackcrawl extract) against trafilatura on labelled pages: precision, recall and F1 per
page, the means, and pages per CPU-second; exits 1 when a target is missed.

  --rounds N   times each page is cleaned for the speed figure, 1..1000 (20)`;

function parseRounds(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: { extract: { type: 'boolean' }, rounds: { type: 'string', default: '20' } },
  });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 1000) {
    throw new BenchOptionsError([`--rounds must be a whole number 1..1000, got "${values.rounds}"`]);
  }
  return rounds;
}

/**
 * `npm run bench -- --extract [--rounds 20]`: prints a table per page, the means, the speed, one
 * JSON line with every figure (also .bench/extract.json), and exits 1 if a target is missed; 2,
 * saying why and what to run, when the labelled pages cannot be had.
 */
export async function extractBenchMain(argv: string[]): Promise<number> {
  const parsed = optionsOrExit('extract bench', EXTRACT_BENCH_USAGE, argv, () => parseRounds(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const rounds = parsed.options;
  let report: ExtractBenchReport;
  try {
    report = await runExtractBench(rounds);
  } catch (err) {
    if (!(err instanceof LabelledPagesError)) throw err;
    process.stderr.write(`extract bench: ${err.message}\n`);
    return 2;
  }
  const pct = (n: number): string => `${(n * 100).toFixed(1)}`.padStart(6);
  const lines = [
    `${'page'.padEnd(34)} ${'ackcrawl P/R/F1 %'.padStart(22)} ${'trafilatura P/R/F1 %'.padStart(22)}`,
    ...report.pages.map(
      (s) =>
        `${s.page.padEnd(34)} ${pct(s.ackcrawl.precision)}${pct(s.ackcrawl.recall)}${pct(s.ackcrawl.f1)}    ${pct(s.trafilatura.precision)}${pct(s.trafilatura.recall)}${pct(s.trafilatura.f1)}`,
    ),
    '',
    `mean F1: ackcrawl ${pct(report.meanF1.ackcrawl)} %, trafilatura ${report.trafilaturaVersion} ${pct(report.meanF1.trafilatura)} %, ratio ${report.meanF1.ratio.toFixed(3)} (target ≥ ${F1_RATIO_TARGET}): ${report.met.f1 ? 'met' : 'MISSED'}`,
    `speed: ${report.speed.pagesPerCpuSecond.toFixed(0)} pages per CPU-second (${report.speed.pagesPerWallSecond.toFixed(0)} per wall second, ${report.speed.pages} records cleaned; target ≥ ${PAGES_PER_CORE_TARGET}): ${report.met.speed ? 'met' : 'MISSED'}; trafilatura ${report.speed.trafilaturaPagesPerCpuSecond.toFixed(0)} pages per CPU-second`,
    `for scale: ${report.speed.generatedPagesPerCpuSecond.toFixed(0)} pages per CPU-second on the crawl bench's generated 10 KB pages`,
  ];
  process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(report)}\n`);
  const dir = join(repoRoot, '.bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'extract.json'), `${JSON.stringify(report, null, 2)}\n`);
  return report.met.f1 && report.met.speed ? 0 : 1;
}
