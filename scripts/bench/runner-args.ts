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
  /** The seeds; links are followed to the seeds' origins only (like ackcrawl's scope "host"). */
  urls: string[];
  concurrency: number;
  maxPages: number;
  /** Runner-specific string options asked for by name. */
  extra: Record<string, string | undefined>;
}

/**
 * `--url URL [--url URL …] --concurrency N --max-pages N`, shared by the reference runners, plus
 * the `extra` string options a runner names.
 */
export function parseRunnerArgs(defaultConcurrency: number, extra: readonly string[] = []): RunnerArgs {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: String(defaultConcurrency) },
      'max-pages': { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
      ...Object.fromEntries(extra.map((name) => [name, { type: 'string' as const }])),
    },
  });
  const urls = values.url as string[] | undefined;
  if (!urls || urls.length === 0) throw new Error('--url is required');
  return {
    urls,
    concurrency: Number(values.concurrency),
    maxPages: Number(values['max-pages']),
    extra: Object.fromEntries(
      extra.map((name) => [name, (values as Record<string, unknown>)[name] as string | undefined]),
    ),
  };
}

export function summarise(ok: number, failed: number, startedAt: number): RunnerSummary {
  const durationMs = Math.round(performance.now() - startedAt);
  const pagesPerSecond = Math.round((ok / Math.max(durationMs, 1)) * 1000 * 10) / 10;
  return { pages: ok, ok, failed, durationMs, pagesPerSecond };
}
