import type { AgentRow, AgentState, ProcessRow, ProcessState } from '../../shared/ports/sql-store.js';
import type { DesiredState } from '../../shared/protocol/agent.js';

export const DEFAULT_AGENT_LOST_AFTER_MS = 10_000;
export const DEFAULT_AGENT_HEARTBEAT_MS = 2_000;

/**
 * An agent's state as shown: what SQL says, unless its last heartbeat is older than
 * `lostAfterMs`: then `lost`, whether or not the sweeper has written it yet, so nothing is shown
 * alive longer than that bound.
 */
export function shownAgentState(agent: AgentRow, now: number, lostAfterMs: number): AgentState {
  const live = agent.state === 'online' || agent.state === 'draining';
  return live && now - agent.lastHeartbeatAt > lostAfterMs ? 'lost' : agent.state;
}

/** A process as shown: `lost` on a lost agent, `stopped` on one that shut down. */
export function shownProcessState(process: ProcessRow, agentState: AgentState): ProcessState {
  if (agentState === 'lost') return 'lost';
  if (agentState === 'stopped') return 'stopped';
  return process.state;
}

/** What the master wants of an agent: the answer to its register and heartbeat. */
export function desiredState(agent: AgentRow, heartbeatMs: number): DesiredState {
  return {
    desiredProcesses: agent.desiredProcesses,
    drain: agent.drain,
    stoppedSlots: agent.orders.stopped,
    restarts: agent.orders.restarts,
    heartbeatMs,
  };
}
