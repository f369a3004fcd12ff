import { AGENT_STATES, PROCESS_STATES } from '../../../shared/ports/sql-store.js';
import type { AgentAnswer } from '../fleet/views.js';
import type { RunAnswer } from '../jobs/views.js';

/** One run as `status` shows it, from the master (a run answer) or from a scheduler (a hosted run). */
export interface StatusRun extends Pick<RunAnswer, 'id' | 'jobId' | 'state' | 'waiting' | 'counters'> {
  /** The job's name, when the master knows it. */
  jobName?: string | null;
  [key: string]: unknown;
}

export interface StatusTotals {
  runs: number;
  /** Runs that fetch now: `running` in the master, `active` in a scheduler. */
  active: number;
  /** Summed over the active runs. */
  pagesPerSecond: number;
  inFlight: number;
  /** Summed over every run shown. */
  queued: number;
  done: number;
  failed: number;
}

export interface FleetSummary {
  agents: { total: number; byState: Record<string, number> };
  processes: { total: number; byState: Record<string, number> };
  /** Crawler processes the master asks of the agents that are not draining. */
  desiredProcesses: number;
}

export interface AlertAnswer {
  id: string;
  ruleId: string;
  subject: string;
  type: string;
  state: string;
  openedAt: string;
  [key: string]: unknown;
}

/** What `ackcrawl status --json` prints: one object, whichever the source. */
export interface StatusAnswer {
  at: string;
  source:
    | { kind: 'master'; url: string }
    | { kind: 'scheduler'; url: string; crawl: string; output: string }
    | { kind: 'files'; dir: string };
  /** Which runs: those not final, or (`--all`) the newest of any state. */
  scope: 'not-final' | 'all';
  runs: StatusRun[];
  /** True when there were more runs than `--limit`. */
  more: boolean;
  totals: StatusTotals;
  /** Null without a master: a scheduler does not know the agents. */
  fleet: FleetSummary | null;
  /** Null without a master. */
  alerts: { active: number; newest: AlertAnswer[] } | null;
}

const ACTIVE = new Set(['running', 'active']);

export function runTotals(runs: readonly StatusRun[]): StatusTotals {
  const active = runs.filter((r) => ACTIVE.has(r.state));
  const sum = (
    list: readonly StatusRun[],
    key: 'done' | 'failed' | 'queued' | 'inFlight' | 'pagesPerSecond',
  ) => list.reduce((total, r) => total + r.counters[key], 0);
  return {
    runs: runs.length,
    active: active.length,
    pagesPerSecond: Math.round(sum(active, 'pagesPerSecond') * 10) / 10,
    inFlight: sum(active, 'inFlight'),
    queued: sum(runs, 'queued'),
    done: sum(runs, 'done'),
    failed: sum(runs, 'failed'),
  };
}

function countBy<T extends string>(states: readonly T[], seen: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(states.map((s) => [s, 0]));
  for (const state of seen) counts[state] = (counts[state] ?? 0) + 1;
  return counts;
}

export function fleetSummary(agents: readonly AgentAnswer[]): FleetSummary {
  const processes = agents.flatMap((a) => a.processes);
  return {
    agents: {
      total: agents.length,
      byState: countBy(
        AGENT_STATES,
        agents.map((a) => a.state),
      ),
    },
    processes: {
      total: processes.length,
      byState: countBy(
        PROCESS_STATES,
        processes.map((p) => p.state),
      ),
    },
    desiredProcesses: agents
      .filter((a) => !a.drain && a.state !== 'stopped')
      .reduce((total, a) => total + a.desiredProcesses, 0),
  };
}
