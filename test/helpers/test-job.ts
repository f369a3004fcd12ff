import type { CrawlSchedulerSettings } from '../../scheduler/crawl-scheduler.js';
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

/**
 * A scheduler's settings for tests that run a CrawlScheduler in-process: loopback on a free port,
 * leases of a minute, records to a test file sink; `job` and `token` are the test's.
 */
export function testSchedulerSettings(
  job: CrawlSettings,
  token: string,
  overrides: Partial<CrawlSchedulerSettings> = {},
): CrawlSchedulerSettings {
  return {
    listenHost: '127.0.0.1',
    listenPort: 0,
    token,
    leaseMs: 60_000,
    heartbeatMs: 10_000,
    bufferSize: 100,
    output: 'file:test',
    ...overrides,
    job,
  };
}
