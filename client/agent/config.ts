import { z } from 'zod';
import { field } from '../../shared/config/load.js';
import { checkTlsPair, tlsClientShape, tlsListenerShape } from '../../shared/config/tls.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, KILL_AFTER_DRAIN_MS } from '../../shared/lifecycle/drain.js';
import { hostPatternSchema } from '../../shared/url/host-patterns.js';

/** Agent settings (ACKCRAWL_<KEY>). Crawler processes inherit the environment, plus their own ids. */
export const agentConfigSchema = z
  .object({
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
    /**
     * The master this agent registers with and sends heartbeats to (http(s)://host:port). Absent:
     * the agent runs on its own (no API, no registration), keeping `processes` running.
     */
    masterUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** The agent credential (docs/fleet.md); absent: the master's `<dataDir>/agent-token`. */
    agentToken: z.string().min(16).optional(),
    /** The agent's API (with a master): address and port (0: any free port). */
    agentHost: z.string().min(1).default('127.0.0.1'),
    agentPort: field.int().max(65535).default(8800),
    /** The URL the master reaches the API at; absent: made from agentHost and the port. */
    agentUrl: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * Host names the API answers besides loopback ones (and, off loopback, IPs and this host's
     * name) and the host of agentUrl: the names the master may reach it by (a DNS name, a proxy).
     */
    agentAllowedHosts: field
      .list()
      .pipe(z.array(z.union([z.literal('*'), hostPatternSchema])))
      .default([]),
    /** Stable across restarts (its desired state is kept by it); absent: `<host name>-<agentPort>`. */
    agentId: z
      .string()
      .regex(/^[A-Za-z0-9._:@-]{1,128}$/, '1 to 128 letters, digits and . _ : @ -')
      .optional(),
    agentName: z.string().min(1).max(200).optional(),
    /** How often a heartbeat goes to the master (the master's answer may ask for another pace). */
    agentHeartbeatMs: field.int(100).default(2_000),
    /** PEM certificate and key for the API (HTTPS); a CA file to trust for an https:// master. */
    ...tlsListenerShape,
    ...tlsClientShape,
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((config, ctx) => checkTlsPair(config, ctx));

export type AgentConfig = z.infer<typeof agentConfigSchema>;

/** How long the agent waits after SIGTERM before it kills a crawler: past the crawler's own drain. */
export function killAfterMs(config: Pick<AgentConfig, 'stopTimeoutMs' | 'drainTimeoutMs'>): number {
  return Math.max(config.stopTimeoutMs, config.drainTimeoutMs + KILL_AFTER_DRAIN_MS);
}
