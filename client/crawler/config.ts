import { hostname } from 'node:os';
import { z } from 'zod';
import { DEFAULT_CHROMIUM_PATH } from '../../shared/config/chromium.js';
import { field } from '../../shared/config/load.js';
import { tlsClientShape } from '../../shared/config/tls.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../../shared/lifecycle/drain.js';

/** Crawler process settings (ACKCRAWL_<KEY>); fetch limits come from the scheduler's welcome. */
export const crawlerConfigSchema = z.object({
  /**
   * The scheduler to take work from, or several (a list: spaces or commas): one session each, the
   * concurrency split among them (scheduler-shares.ts), so a crawler serves any scheduler of a
   * sharded crawl.
   */
  schedulerUrl: field
    .list()
    .pipe(
      z
        .array(
          z
            .string()
            .url()
            .regex(/^wss?:\/\//, 'a ws:// or wss:// URL'),
        )
        .min(1)
        .refine((urls) => new Set(urls).size === urls.length, 'each scheduler once'),
    )
    .default(['ws://127.0.0.1:8700/crawlers']),
  /** For a wss:// scheduler: the CA file trusted besides the system's (docs/tls.md). */
  ...tlsClientShape,
  /** The scheduler's token; absent: the one in `<dataDir>/token` (a scheduler on this machine). */
  token: z.string().optional(),
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  crawlerId: z.string().min(1).default(`${hostname()}-${process.pid}`),
  concurrency: field.int(1).default(32),
  /**
   * Announce the `render` capability and render the tasks that ask for it in a browser. Such a
   * process works on at most `renderConcurrency` tasks at once, fetched or rendered.
   */
  canRender: field.bool().default(false),
  /** The browser: Debian's chromium package. Never downloaded by a tool. */
  chromiumPath: z.string().min(1).default(DEFAULT_CHROMIUM_PATH),
  renderConcurrency: field.int(1).default(4),
  /** After the page's load event, wait at most this long for the network to settle. */
  renderIdleTimeoutMs: field.int(0).default(5_000),
  /**
   * On SIGTERM: how long running tasks may take to finish and deliver their outcomes before they
   * are handed back (tasks not started are handed back at once). The agent waits longer than this
   * before SIGKILL.
   */
  drainTimeoutMs: field.int(0).default(DEFAULT_DRAIN_TIMEOUT_MS),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type CrawlerConfig = z.infer<typeof crawlerConfigSchema>;
