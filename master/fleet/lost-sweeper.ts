import { startPeriodicPass } from '../../shared/lifecycle/periodic-pass.js';
import type { Logger } from '../../shared/logger.js';
import type { AgentRepository } from '../../shared/ports/sql-store.js';

export interface LostSweeper {
  /** One pass now, or the one in flight (the timer runs one every `everyMs`). */
  sweep(): Promise<string[]>;
  /** Stops the timer and waits for the pass in flight. */
  close(): Promise<void>;
}

/**
 * Writes `lost` into SQL for agents that stopped sending heartbeats (and for their processes), so
 * the alert engine and every reader of the rows see it, not only the API's computed view. Runs
 * every `everyMs`; a pass that fails (the database away) is logged and the next one tries again.
 */
export function startLostSweeper(deps: {
  agents: AgentRepository;
  lostAfterMs: number;
  everyMs: number;
  now: () => number;
  logger: Logger;
}): LostSweeper {
  const sweep = async (): Promise<string[]> => {
    const lost = await deps.agents.markLost(deps.now() - deps.lostAfterMs);
    for (const id of lost) {
      deps.logger.warn({ agentId: id, lostAfterMs: deps.lostAfterMs }, 'agent lost: no heartbeat');
    }
    return lost;
  };
  const pass = startPeriodicPass(sweep, {
    intervalMs: deps.everyMs,
    onError: (err) => deps.logger.warn({ err }, 'lost-agent sweep failed; trying again'),
  });
  return { sweep: pass.runOnce, close: pass.close };
}
