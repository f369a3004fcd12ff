import { z } from 'zod';
import { defaultCharsetSchema } from './charset-label.js';
import { renderHostsSchema, renderModeSchema } from './render-rules.js';
import {
  DEFAULT_MAX_LINKS_PER_PAGE,
  DEFAULT_MAX_URL_LENGTH,
  MAX_LINKS_PER_PAGE_LIMIT,
  MAX_URL_LENGTH_LIMIT,
} from './link-limits.js';
import { hostRulesSchema } from '../politeness/host-rules.js';
import { proxyUrlSchema } from './proxy-url.js';

/**
 * The scheduler's crawl API (`POST /crawl`, `GET /crawl`), used by `ackcrawl crawl --cluster` to
 * hand seeds and a crawl's settings to a running cluster and follow it to completion.
 */
export const crawlRequestSchema = z.object({
  seeds: z.array(z.string().max(8192)).min(1).max(10_000),
  maxPages: z.number().int().nonnegative().default(0),
  maxDepth: z.number().int().nonnegative().default(0),
  scope: z.enum(['host', 'domain', 'any']).default('host'),
  hostConcurrency: z.number().int().positive().default(2),
  hostDelayMs: z.number().int().nonnegative().default(500),
  hostRules: hostRulesSchema.default([]),
  adaptiveDelay: z.boolean().default(false),
  maxCrawlDelayMs: z.number().int().nonnegative().default(30_000),
  maxCooldownMs: z.number().int().positive().default(3_600_000),
  retryDelayMs: z.number().int().nonnegative().default(300_000),
  allowPrivate: z.boolean().default(false),
  userAgent: z.string().min(1).max(500).optional(),
  /** Render pages in a browser: every page (`always`) or only those of `renderHosts`. */
  render: renderModeSchema.default('never'),
  renderHosts: renderHostsSchema.default([]),
  maxUrlLength: z.number().int().min(1).max(MAX_URL_LENGTH_LIMIT).default(DEFAULT_MAX_URL_LENGTH),
  maxLinksPerPage: z.number().int().min(1).max(MAX_LINKS_PER_PAGE_LIMIT).default(DEFAULT_MAX_LINKS_PER_PAGE),
  defaultCharset: defaultCharsetSchema.optional(),
  /** User-Agents to rotate through (per request); absent: the scheduler's; empty: no rotation. */
  userAgents: z.array(z.string().min(1).max(500)).max(1000).optional(),
  /** Proxy URLs; absent: the scheduler's; empty: direct. */
  proxies: z.array(proxyUrlSchema).max(10_000).optional(),
  /** Obey robots.txt (disallowed URLs end as ROBOTS_DENIED records, Crawl-delay slows the host). */
  respectRobots: z.boolean().default(true),
  /** Queue each host's sitemaps (robots.txt `Sitemap:` lines and /sitemap.xml). */
  sitemaps: z.boolean().default(false),
});
export type CrawlRequest = z.infer<typeof crawlRequestSchema>;

export interface CrawlStatus {
  /** idle: nothing submitted yet; crawling; done: every accepted URL settled. */
  status: 'idle' | 'crawling' | 'done';
  progress: Record<string, number>;
  summary: Record<string, number> | null;
  /** Where records go, e.g. `kafka:ackcrawl.pages` or `file:/path`. */
  output: string;
}
