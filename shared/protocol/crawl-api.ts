import type { z } from 'zod';
import { CrawlSettingsPatchSchema, CrawlSettingsSchema } from '../crawl-settings/index.js';

/**
 * The scheduler's crawl API (`POST /crawl`, `GET /crawl`), used by `ackcrawl crawl --cluster` to
 * hand seeds and a crawl's settings to a running cluster and follow it to completion.
 *
 * The body is a crawl's settings (shared/crawl-settings) with its seeds: the settings it leaves
 * out are the scheduler's configured ones. Unknown fields are refused (a typo is not ignored).
 */
export const crawlRequestSchema = CrawlSettingsPatchSchema.extend({
  seeds: CrawlSettingsSchema.shape.seeds,
}).superRefine((request, ctx) => {
  // A scheduler's own crawl has no owner to end it at a time limit: the master ends its runs,
  // `ackcrawl crawl` its embedded crawl. Refused rather than ignored.
  if ((request.maxDurationMs ?? 0) > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxDurationMs'],
      message:
        "a scheduler's own crawl is not timed: give the limit to a job of the master (its runs are cancelled at it) or to `ackcrawl crawl` without --cluster",
    });
  }
});
export type CrawlRequest = z.output<typeof crawlRequestSchema>;

export interface CrawlStatus {
  /** idle: nothing submitted yet; crawling; done: every accepted URL settled. */
  status: 'idle' | 'crawling' | 'done';
  progress: Record<string, number>;
  summary: Record<string, number> | null;
  /** Where records go, e.g. `kafka:ackcrawl.pages` or `file:/path`. */
  output: string;
}
