import { crawlDefaults, type CrawlSettings } from '../../shared/crawl-settings/index.js';

/**
 * A crawl's settings for tests that drive a CrawlScheduler in-process with hand-written crawlers:
 * no politeness delay, short timeouts, robots.txt off unless a test turns it on.
 */
export function testJob(seeds: readonly string[], overrides: Partial<CrawlSettings> = {}): CrawlSettings {
  return {
    ...crawlDefaults(),
    scope: 'any',
    hostConcurrency: 1,
    hostDelayMs: 0,
    retryDelayMs: 60_000,
    respectRobots: false,
    userAgent: 'ackcrawl-test',
    connectTimeoutMs: 1_000,
    responseTimeoutMs: 1_000,
    totalTimeoutMs: 2_000,
    maxRedirects: 3,
    maxBodyBytes: 1024 * 1024,
    ...overrides,
    seeds: [...seeds],
  };
}
