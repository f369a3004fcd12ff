import { hostname } from 'node:os';
import { z } from 'zod';
import { field } from '../../shared/config/load.js';

/** Crawler process settings (ACKCRAWL_<KEY>); fetch limits come from the scheduler's welcome. */
export const crawlerConfigSchema = z.object({
  schedulerUrl: z.string().url().default('ws://127.0.0.1:8700/crawlers'),
  token: z.string().optional(),
  crawlerId: z.string().min(1).default(`${hostname()}-${process.pid}`),
  concurrency: field.int(1).default(32),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type CrawlerConfig = z.infer<typeof crawlerConfigSchema>;
