import { listAgents } from '../fleet/commands.js';
import type { MasterClient } from '../jobs/master-client.js';
import { fleetSummary, runTotals, type AlertAnswer, type StatusAnswer, type StatusRun } from './answer.js';

/** The run states that are not final, as the master's `?state=` takes them. */
const NOT_FINAL = ['queued', 'running', 'paused'];

/** How many active alerts `status` lists (the count covers all of them). */
export const NEWEST_ALERTS = 5;

interface Page<T> {
  items: T[];
  next: string | null;
}

async function activeAlerts(client: MasterClient): Promise<AlertAnswer[]> {
  const alerts: AlertAnswer[] = [];
  let after: string | null = null;
  do {
    const query: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const page = (await client.call('GET', `/alerts?state=active&limit=500${query}`)) as Page<AlertAnswer>;
    alerts.push(...page.items);
    after = page.next;
  } while (after !== null);
  return alerts;
}

/** Names the runs' jobs (one lookup per job; a job deleted since keeps its id only). */
async function withJobNames(client: MasterClient, runs: StatusRun[]): Promise<StatusRun[]> {
  const names = new Map<string, string | null>();
  await Promise.all(
    [...new Set(runs.map((r) => r.jobId))].map(async (jobId) => {
      try {
        const job = (await client.call('GET', `/jobs/${encodeURIComponent(jobId)}`)) as { name: string };
        names.set(jobId, job.name);
      } catch {
        names.set(jobId, null);
      }
    }),
  );
  // The run's settings stay out: `ackcrawl jobs show RUN --json` has them.
  return runs.map((r) => ({
    id: r.id,
    jobId: r.jobId,
    jobName: names.get(r.jobId) ?? null,
    state: r.state,
    waiting: r.waiting,
    counters: r.counters,
    schedulerId: r.schedulerId ?? null,
    createdAt: r.createdAt,
    startedAt: r.startedAt ?? null,
    endedAt: r.endedAt ?? null,
    error: r.error ?? null,
  }));
}

/**
 * One view of a master: its runs (those not final, or the newest `limit` with `all`), the fleet
 * in counts, and the active alerts. Three reads of the API, made at once; each fails the whole.
 */
export async function masterStatus(
  client: MasterClient,
  options: { all: boolean; limit: number },
  now: () => number,
): Promise<StatusAnswer> {
  const states = options.all ? '' : NOT_FINAL.map((s) => `&state=${s}`).join('');
  const [runPage, agents, alerts] = await Promise.all([
    client.call('GET', `/runs?limit=${options.limit}${states}`) as Promise<Page<StatusRun>>,
    listAgents(client),
    activeAlerts(client),
  ]);
  const runs = await withJobNames(client, runPage.items);
  return {
    at: new Date(now()).toISOString(),
    source: { kind: 'master', url: client.baseUrl },
    scope: options.all ? 'all' : 'not-final',
    runs,
    more: runPage.next !== null,
    totals: runTotals(runs),
    fleet: fleetSummary(agents),
    alerts: {
      active: alerts.length,
      newest: [...alerts].sort((a, b) => b.openedAt.localeCompare(a.openedAt)).slice(0, NEWEST_ALERTS),
    },
  };
}
