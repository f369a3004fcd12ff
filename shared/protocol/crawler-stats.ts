import { z } from 'zod';

/**
 * What a crawler process tells its agent over the child's IPC channel, once a second: its own
 * counters since it started. The agent adds them up per slot and reports them to the master.
 */
export const crawlerStatsSchema = z.object({
  type: z.literal('crawler-stats').optional(),
  /** Tasks it is working on now. */
  inFlight: z.number().int().min(0),
  /** Tasks it finished and delivered an outcome for. */
  pagesDone: z.number().int().min(0),
  /** Tasks whose work failed (a fetch error, a refused or failed page, a bug). */
  errors: z.number().int().min(0),
});
export type CrawlerStats = Omit<z.infer<typeof crawlerStatsSchema>, 'type'>;

export const CRAWLER_STATS_EVERY_MS = 1_000;
