import { AppError } from '../../shared/errors.js';
import type { CrawlStatus } from '../../shared/protocol/crawl-api.js';
import type { CrawlPlan } from '../cli/crawl-options.js';
import { httpStatusCode, toErrorCode } from '../../shared/error-codes/index.js';
import { requestJson, type JsonAnswer } from '../../shared/http/json-request.js';

export interface ClusterTarget {
  /** The scheduler's crawler endpoint, as agents and crawlers know it (ACKCRAWL_SCHEDULER_URL). */
  schedulerUrl: string;
  /** Its token (ACKCRAWL_TOKEN, or the token file a scheduler on this machine wrote). */
  token: string;
}

/** `ws://host:port/crawlers` → `http://host:port/crawl`. */
export function crawlApiUrl(schedulerUrl: string): string {
  const url = new URL(schedulerUrl);
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  url.pathname = '/crawl';
  url.search = '';
  return url.toString();
}

async function call(
  target: ClusterTarget,
  init: { method: 'GET' | 'POST'; body?: unknown },
): Promise<unknown> {
  const url = crawlApiUrl(target.schedulerUrl);
  let answer: JsonAnswer;
  try {
    answer = await requestJson(url, { ...init, token: target.token, timeoutMs: 30_000 });
  } catch (err) {
    throw new AppError(
      'SCHEDULER_UNREACHABLE',
      `cannot reach the scheduler at ${url} (${(err as Error).message}); is it running? (ACKCRAWL_SCHEDULER_URL)`,
      { cause: err },
    );
  }
  const body = (answer.body ?? {}) as { error?: { code?: string; message?: string } };
  if (answer.status < 200 || answer.status > 299) {
    throw new AppError(
      toErrorCode(body.error?.code, httpStatusCode(answer.status)),
      body.error?.message ?? `scheduler answered ${answer.status}`,
      {
        status: answer.status,
      },
    );
  }
  return body;
}

/**
 * Submits the seeds and settings to a running cluster and follows the crawl until every accepted
 * URL is settled. A scheduler restart during the crawl, or a 503 while a service it needs is away,
 * is waited out (up to 10 minutes), not reported as a failure.
 */
export async function runClusterCrawl(
  plan: CrawlPlan,
  target: ClusterTarget,
  hooks: { onProgress?: (progress: Record<string, number>) => void; pollMs?: number } = {},
): Promise<{ summary: Record<string, number>; output: string }> {
  // Only what the user set: the scheduler's configuration fills the rest.
  await call(target, { method: 'POST', body: plan.request });
  const pollMs = hooks.pollMs ?? 500;
  let unreachableSince: number | null = null;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    let status: CrawlStatus;
    try {
      status = (await call(target, { method: 'GET' })) as CrawlStatus;
      unreachableSince = null;
    } catch (err) {
      // Down, or up without a service it needs (503: RabbitMQ or Kafka away): waited out alike.
      const away = err instanceof AppError && (err.code === 'SCHEDULER_UNREACHABLE' || err.status === 503);
      if (!away) throw err;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > 10 * 60_000) throw err;
      continue;
    }
    hooks.onProgress?.(status.progress);
    if (status.status === 'done' && status.summary) return { summary: status.summary, output: status.output };
  }
}
