import { parseArgs } from 'node:util';

/** What every reference runner prints as its last stdout line, the same shape as `ackcrawl crawl --json`. */
export interface RunnerSummary {
  pages: number;
  ok: number;
  failed: number;
  durationMs: number;
  pagesPerSecond: number;
}

export interface RunnerArgs {
  url: string;
  concurrency: number;
  maxPages: number;
}

/** `--url URL --concurrency N --max-pages N`, shared by the reference runners. */
export function parseRunnerArgs(defaultConcurrency: number): RunnerArgs {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      concurrency: { type: 'string', default: String(defaultConcurrency) },
      'max-pages': { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    },
  });
  if (!values.url) throw new Error('--url is required');
  return { url: values.url, concurrency: Number(values.concurrency), maxPages: Number(values['max-pages']) };
}

export function summarise(ok: number, failed: number, startedAt: number): RunnerSummary {
  const durationMs = Math.round(performance.now() - startedAt);
  const pagesPerSecond = Math.round((ok / Math.max(durationMs, 1)) * 1000 * 10) / 10;
  return { pages: ok, ok, failed, durationMs, pagesPerSecond };
}
