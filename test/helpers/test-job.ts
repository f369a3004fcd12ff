import type { JobSettings } from '../../scheduler/crawl-scheduler.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';

/**
 * A crawl's settings for tests that drive a CrawlScheduler in-process with hand-written crawlers:
 * no politeness delay, short timeouts, robots.txt off unless a test turns it on.
 */
export function testJob(
  seeds: readonly string[],
  overrides: Partial<Omit<JobSettings, 'fetch'>> & { fetch?: Partial<FetchSettings> } = {},
): JobSettings {
  const { fetch, ...rest } = overrides;
  return {
    seeds: [...seeds],
    scope: 'any',
    maxPages: 0,
    maxDepth: 0,
    hostConcurrency: 1,
    hostDelayMs: 0,
    hostRules: [],
    adaptiveDelay: false,
    maxCrawlDelayMs: 30_000,
    maxCooldownMs: 3_600_000,
    retryDelayMs: 60_000,
    maxAttempts: 3,
    respectRobots: false,
    ...rest,
    fetch: {
      userAgent: 'ackcrawl-test',
      connectTimeoutMs: 1_000,
      responseTimeoutMs: 1_000,
      totalTimeoutMs: 2_000,
      maxRedirects: 3,
      maxBodyBytes: 1024 * 1024,
      allowPrivate: false,
      ...fetch,
    },
  };
}
