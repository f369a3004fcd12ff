import { z } from 'zod';
import { field } from '../../shared/config/load.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, KILL_AFTER_DRAIN_MS } from '../../shared/lifecycle/drain.js';

/** Agent settings (ACKCRAWL_<KEY>). Crawler processes inherit the environment, plus their own ids. */
export const agentConfigSchema = z.object({
  /** The scheduler's token, for the crawlers; absent: the one in `<dataDir>/token`. */
  token: z.string().optional(),
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  processes: field.int(0).default(2),
  /** Render-capable crawler processes (ACKCRAWL_CAN_RENDER) kept running besides `processes`. */
  renderProcesses: field.int(0).default(0),
  /** Restarts of one slot within a minute before the agent gives that slot a longer pause. */
  maxRestartsPerMinute: field.int(1).default(10),
  /**
   * SIGTERM to a crawler, then SIGKILL after this; never sooner than the crawlers' own drain
   * deadline plus 5 s (see killAfterMs), so a draining crawler is not killed mid-delivery.
   */
  stopTimeoutMs: field.int(100).default(DEFAULT_DRAIN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS),
  /** The crawlers' drain deadline (they read the same ACKCRAWL_DRAIN_TIMEOUT_MS). */
  drainTimeoutMs: field.int(0).default(DEFAULT_DRAIN_TIMEOUT_MS),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type AgentConfig = z.infer<typeof agentConfigSchema>;

/** How long the agent waits after SIGTERM before it kills a crawler: past the crawler's own drain. */
export function killAfterMs(config: Pick<AgentConfig, 'stopTimeoutMs' | 'drainTimeoutMs'>): number {
  return Math.max(config.stopTimeoutMs, config.drainTimeoutMs + KILL_AFTER_DRAIN_MS);
}
