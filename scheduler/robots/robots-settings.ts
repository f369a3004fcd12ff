import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import type { RobotsCacheOptions } from './robots-cache.js';
import type { RobotsPolicy } from './robots-guard.js';

/** The scheduler's robots.txt cache settings (not per crawl). */
export type RobotsCacheSettings = Omit<RobotsCacheOptions, 'onEvict'>;

export const ROBOTS_CACHE_DEFAULTS: RobotsCacheSettings = {
  ttlMs: 24 * 3600 * 1000,
  retryMs: 1_000,
  retryMaxMs: 300_000,
  maxHosts: 10_000,
  maxBytes: 64 * 1024 * 1024,
};

/** What the robots guard applies of a crawl's settings. */
export function robotsPolicy(
  job: Pick<CrawlSettings, 'respectRobots' | 'sitemaps' | 'userAgent' | 'maxAttempts' | 'retryDelayMs'>,
): RobotsPolicy {
  return {
    respectRobots: job.respectRobots,
    sitemaps: job.sitemaps,
    userAgent: job.userAgent,
    maxAttempts: job.maxAttempts,
    retryDelayMs: job.retryDelayMs,
  };
}
