import { z } from 'zod';
import { PROCESS_STATES } from '../ports/sql-store.js';

/**
 * What an agent and the master say to each other (docs/fleet.md). The agent registers, then sends
 * a heartbeat every few seconds; each answer is the master's desired state for it, read from SQL,
 * which the agent reconciles with what runs. Times are milliseconds since the epoch.
 */
const count = z.number().int().min(0);

export const hostFactsSchema = z.object({
  cpus: count,
  cpuModel: z.string().max(200),
  memoryTotalBytes: count,
  memoryFreeBytes: count,
  /** 1, 5 and 15 minutes. */
  loadAverage: z.array(z.number().min(0)).length(3),
  /** Of the filesystem that holds the agent's data dir; null when it cannot be read. */
  diskFreeBytes: count.nullable(),
  diskTotalBytes: count.nullable(),
  uptimeSeconds: z.number().min(0),
  platform: z.string().max(50),
  nodeVersion: z.string().max(50),
  agentPid: count,
});
export type HostFacts = z.infer<typeof hostFactsSchema>;

export const processReportSchema = z.object({
  slot: count.max(100_000),
  pid: count.nullable(),
  state: z.enum(PROCESS_STATES),
  startedAt: count.nullable(),
  restarts: count,
  inFlight: count,
  pagesDone: count,
  errors: count,
  rssBytes: count,
  cpuSeconds: z.number().min(0),
});
export type ProcessReport = z.infer<typeof processReportSchema>;

export const agentRegisterSchema = z.strictObject({
  name: z.string().min(1).max(200),
  hostname: z.string().min(1).max(200),
  /** Where the agent's API answers (http(s)://host:port). */
  url: z.url({ protocol: /^https?$/ }).max(2000),
  facts: hostFactsSchema,
  /** The count a new agent starts with (ACKCRAWL_PROCESSES); a known agent keeps the master's. */
  processes: count.max(1000),
});
export type AgentRegister = z.infer<typeof agentRegisterSchema>;

export const MAX_REPORTED_PROCESSES = 1000;

export const agentHeartbeatSchema = z.strictObject({
  facts: hostFactsSchema,
  processes: z.array(processReportSchema).max(MAX_REPORTED_PROCESSES),
});
export type AgentHeartbeat = z.infer<typeof agentHeartbeatSchema>;

export const desiredStateSchema = z.object({
  /** Crawler processes wanted (slots 0 … desiredProcesses − 1). */
  desiredProcesses: count,
  /** Stop every process (drain) and start none until a count is set again. */
  drain: z.boolean(),
  /** Slots kept stopped. */
  stoppedSlots: z.array(count),
  /** Restarts asked per slot: a slot whose number grew is restarted once. */
  restarts: z.record(z.string().regex(/^\d+$/), count),
  /** How often the master wants a heartbeat, ms. */
  heartbeatMs: count,
});
export type DesiredState = z.infer<typeof desiredStateSchema>;
