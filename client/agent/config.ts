import { z } from 'zod';
import { field } from '../../shared/config/load.js';
import { checkTlsPair, tlsClientShape, tlsListenerShape } from '../../shared/config/tls.js';
import { supervisionShape } from '../../shared/processes/supervision-config.js';
import { hostPatternSchema } from '../../shared/url/host-patterns.js';

/** Agent settings (ACKCRAWL_<KEY>). Crawler processes inherit the environment, plus their own ids. */
export const agentConfigSchema = z
  .object({
    ...supervisionShape,
    /**
     * The master this agent registers with and sends heartbeats to (http(s)://host:port). Absent:
     * the agent runs on its own (no API, no registration), keeping `processes` running.
     */
    masterUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** The agent credential (docs/fleet.md); absent: the master's `<dataDir>/agent-token`. */
    agentToken: z.string().min(16).optional(),
    /** The agent's API (with a master): address and port (0: any free port). */
    agentHost: z.string().min(1).default('127.0.0.1'),
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
    agentName: z.string().min(1).max(200).optional(),
    /** How often a heartbeat goes to the master (the master's answer may ask for another pace). */
    agentHeartbeatMs: field.int(100).default(2_000),
    /** PEM certificate and key for the API (HTTPS); a CA file to trust for an https:// master. */
    ...tlsListenerShape,
    ...tlsClientShape,
  })
  .superRefine((config, ctx) => checkTlsPair(config, ctx));

export type AgentConfig = z.infer<typeof agentConfigSchema>;
