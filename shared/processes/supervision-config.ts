import { z } from 'zod';
import { field } from '../config/load.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, KILL_AFTER_DRAIN_MS } from '../lifecycle/drain.js';

/**
 * How a host's crawler processes are kept (ACKCRAWL_<KEY>): by `ackcrawl agent`, whose settings
 * extend these, and by an embedded crawl. Crawler processes inherit the environment, plus their
 * own ids.
 */
export const supervisionShape = {
  /** The scheduler's token, for the crawlers; absent: the one in `<dataDir>/token`. */
  token: z.string().optional(),
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  /** Crawler processes at first start; a master, once it knows the agent, sets the count. */
  processes: field.int(0).default(2),
  /** Render-capable crawler processes (ACKCRAWL_CAN_RENDER) kept running besides `processes`. */
  renderProcesses: field.int(0).default(0),
  /**
   * This many failed starts of one slot within crashLoopWindowMs make a crash loop: no more
   * restarts. A failed start: an exit before the crawler reported running, or within
   * crashLoopMinUptimeMs of its start; a crawler killed while it works is always restarted.
   */
  crashLoopCrashes: field.int(1).default(5),
  crashLoopWindowMs: field.int(1000).default(60_000),
  crashLoopMinUptimeMs: field.int(0).default(1_000),
  /** First pause before restarting a crashed crawler, doubled per recent crash (up to 10 s). */
  restartBackoffMs: field.int(0).default(500),
  /**
   * SIGTERM to a crawler, then SIGKILL after this; never sooner than the crawlers' own drain
   * deadline plus 5 s (see killAfterMs), so a draining crawler is not killed mid-delivery.
   */
  stopTimeoutMs: field.int(100).default(DEFAULT_DRAIN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS),
  /** The crawlers' drain deadline (they read the same ACKCRAWL_DRAIN_TIMEOUT_MS). */
  drainTimeoutMs: field.int(0).default(DEFAULT_DRAIN_TIMEOUT_MS),
  /** Stable across restarts (an agent's desired state is kept by it); absent: `<host name>-<agentPort>`. */
  agentId: z
    .string()
    .regex(/^[A-Za-z0-9._:@-]{1,128}$/, '1 to 128 letters, digits and . _ : @ -')
    .optional(),
  /** The agent's API port (with a master; 0: any free port), part of the default agent id. */
  agentPort: field.int().max(65535).default(8800),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

export const supervisionConfigSchema = z.object(supervisionShape);
export type SupervisionConfig = z.infer<typeof supervisionConfigSchema>;

/** How long to wait after SIGTERM before killing a crawler: past the crawler's own drain. */
export function killAfterMs(config: Pick<SupervisionConfig, 'stopTimeoutMs' | 'drainTimeoutMs'>): number {
  return Math.max(config.stopTimeoutMs, config.drainTimeoutMs + KILL_AFTER_DRAIN_MS);
}
