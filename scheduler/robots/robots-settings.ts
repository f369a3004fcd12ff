import type { RobotsCacheOptions } from './robots-cache.js';
import type { RobotsPolicy } from './robots-guard.js';

/** A crawl's robots.txt and sitemap choices (optional in saved jobs: defaults apply). */
export interface JobRobotsSettings {
  /** Obey robots.txt (default true). */
  respectRobots?: boolean;
  /** Queue `Sitemap:` URLs of robots.txt and `/sitemap.xml` of each host (default false). */
  sitemaps?: boolean;
  /** Levels of sitemap index below a root sitemap that are followed (default 3). */
  sitemapMaxDepth?: number;
}

/** The scheduler's robots.txt cache settings (not per crawl). */
export type RobotsCacheSettings = Omit<RobotsCacheOptions, 'onEvict'>;

export const ROBOTS_DEFAULTS = {
  respectRobots: true,
  sitemaps: false,
  sitemapMaxDepth: 3,
  cache: {
    ttlMs: 24 * 3600 * 1000,
    retryMs: 1_000,
    retryMaxMs: 300_000,
    maxHosts: 10_000,
    maxBytes: 64 * 1024 * 1024,
  } satisfies RobotsCacheSettings,
};

export function robotsPolicy(
  job: JobRobotsSettings & {
    fetch: { userAgent: string };
    maxAttempts: number;
    retryDelayMs: number;
  },
): RobotsPolicy {
  return {
    respectRobots: job.respectRobots ?? ROBOTS_DEFAULTS.respectRobots,
    sitemaps: job.sitemaps ?? ROBOTS_DEFAULTS.sitemaps,
    userAgent: job.fetch.userAgent,
    maxAttempts: job.maxAttempts,
    retryDelayMs: job.retryDelayMs,
  };
}
