import type { AgentRepository } from '../../shared/ports/sql-store.js';
import type { CrashLoop, LostAgent } from './facts.js';

/** Every agent is read, page by page; a fleet is hundreds of rows, not millions. */
const PAGE = 500;

/**
 * The alert engine's fleet facts, read from the SQL rows the master's fleet keeps (the lost
 * sweeper marks agents `lost`, heartbeats report processes in `crash-loop`).
 */
export function fleetFacts(agents: AgentRepository): {
  lostAgents: () => Promise<LostAgent[]>;
  crashLoops: () => Promise<CrashLoop[]>;
} {
  return {
    lostAgents: async () => {
      const lost: LostAgent[] = [];
      let after: string | null = null;
      do {
        const page = await agents.list({ limit: PAGE, after });
        for (const agent of page.items) {
          if (agent.state === 'lost') {
            lost.push({ agentId: agent.id, host: agent.hostname, lastSeenAt: agent.lastHeartbeatAt });
          }
        }
        after = page.next;
      } while (after !== null);
      return lost;
    },
    crashLoops: async () =>
      (await agents.processesIn('crash-loop')).map((p) => ({
        agentId: p.agentId,
        processId: String(p.slot),
        restarts: p.restarts,
        since: p.startedAt,
      })),
  };
}
