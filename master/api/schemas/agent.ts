import { z } from 'zod';
import {
  AGENT_STATES,
  PROCESS_STATES,
  type AgentRow,
  type ProcessRow,
} from '../../../shared/ports/sql-store.js';
import { hostFactsSchema } from '../../../shared/protocol/agent.js';
import { shownAgentState, shownProcessState } from '../../fleet/fleet-view.js';
import { idParam, isoTime, toIso, toIsoOrNull } from './common.js';

export const slotParams = z.strictObject({
  id: idParam,
  slot: z.coerce.number().int().min(0).max(100_000).describe('The process slot (0, 1, …).'),
});

export const processCountSchema = z.strictObject({
  count: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .describe('Crawler processes wanted on the agent (slots 0 … count − 1). Ends a drain.'),
});

export const processSchema = z.object({
  slot: z.number().int(),
  pid: z.number().int().nullable(),
  state: z
    .enum(PROCESS_STATES)
    .describe('`lost` whenever its agent is; `crash-loop`: it kept crashing and is not restarted.'),
  startedAt: isoTime.nullable(),
  uptimeSeconds: z.number().nullable(),
  restarts: z.number().int(),
  inFlight: z.number().int().describe('Tasks it is working on.'),
  pagesDone: z.number().int(),
  errors: z.number().int(),
  rssBytes: z.number().int(),
  cpuSeconds: z.number(),
  reportedAt: isoTime,
});

export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  hostname: z.string(),
  url: z.string().describe('Its API, as it registered it.'),
  state: z
    .enum(AGENT_STATES)
    .describe('`lost` once no heartbeat came for the lost bound (10 s by default), computed at each read.'),
  facts: hostFactsSchema.partial().passthrough(),
  lastHeartbeatAt: isoTime,
  registeredAt: isoTime,
  desiredProcesses: z.number().int(),
  drain: z.boolean(),
  stoppedSlots: z.array(z.number().int()),
  processes: z.array(processSchema),
});

export function agentView(
  agent: AgentRow,
  processes: readonly ProcessRow[],
  now: number,
  lostAfterMs: number,
): z.input<typeof agentSchema> {
  const state = shownAgentState(agent, now, lostAfterMs);
  return {
    id: agent.id,
    name: agent.name,
    hostname: agent.hostname,
    url: agent.url,
    state,
    facts: (agent.facts ?? {}) as Record<string, unknown>,
    lastHeartbeatAt: toIso(agent.lastHeartbeatAt),
    registeredAt: toIso(agent.registeredAt),
    desiredProcesses: agent.desiredProcesses,
    drain: agent.drain,
    stoppedSlots: agent.orders.stopped,
    processes: processes.map((p) => {
      const shown = shownProcessState(p, state);
      return {
        slot: p.slot,
        pid: p.pid,
        state: shown,
        startedAt: toIsoOrNull(p.startedAt),
        uptimeSeconds:
          p.startedAt !== null && (shown === 'running' || shown === 'stopping')
            ? Math.max(0, Math.round((now - p.startedAt) / 1000))
            : null,
        restarts: p.restarts,
        inFlight: p.inFlight,
        pagesDone: p.pagesDone,
        errors: p.errors,
        rssBytes: p.rssBytes,
        cpuSeconds: p.cpuSeconds,
        reportedAt: toIso(p.reportedAt),
      };
    }),
  };
}
