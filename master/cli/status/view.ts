import { formatTable } from '../jobs/table.js';
import type { FleetSummary, StatusAnswer } from './answer.js';

const when = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** "2 online, 1 lost" from counts by state: the states with none are left out. */
function byState(counts: Record<string, number>): string {
  const seen = Object.entries(counts).filter(([, n]) => n > 0);
  return seen.length === 0 ? 'none' : seen.map(([state, n]) => `${n} ${state}`).join(', ');
}

function runsSection(a: StatusAnswer): string {
  const heading =
    a.scope === 'all'
      ? `RUNS (newest ${a.runs.length}${a.more ? ', more not shown' : ''})`
      : 'RUNS (not final)';
  if (a.runs.length === 0)
    return `${heading}\n${a.scope === 'all' ? 'no runs' : 'no run is queued, running or paused'}`;
  const table = formatTable(
    ['RUN', 'JOB', 'STATE', 'DONE', 'FAILED', 'QUEUED', 'IN FLIGHT', 'PAGES/S', 'WAITING'],
    a.runs.map((r) => [
      r.id,
      r.jobName ?? r.jobId,
      r.state,
      String(r.counters.done),
      String(r.counters.failed),
      String(r.counters.queued),
      String(r.counters.inFlight),
      r.counters.pagesPerSecond.toFixed(1),
      r.waiting ?? '-',
    ]),
  );
  const t = a.totals;
  const more = a.more && a.scope === 'not-final' ? ' (more runs than --limit: raise it to see them)' : '';
  return `${heading}\n${table}\ntotal: ${t.runs} run${t.runs === 1 ? '' : 's'}, ${t.active} active at ${t.pagesPerSecond.toFixed(1)} pages/s, ${t.inFlight} in flight, ${t.queued} queued, ${t.done} done, ${t.failed} failed${more}`;
}

function fleetSection(fleet: FleetSummary | null): string {
  if (fleet === null)
    return 'FLEET\nnot known here: the agents report to a master (ackcrawl status with ACKCRAWL_MASTER_URL)';
  return [
    'FLEET',
    `agents: ${fleet.agents.total} (${byState(fleet.agents.byState)})`,
    `crawler processes: ${fleet.processes.total} (${byState(fleet.processes.byState)}), ${fleet.desiredProcesses} wanted`,
  ].join('\n');
}

function alertsSection(alerts: StatusAnswer['alerts']): string {
  if (alerts === null) return 'ALERTS\nnot known here: a master raises them';
  if (alerts.active === 0) return 'ALERTS\nnone active';
  const table = formatTable(
    ['TYPE', 'SUBJECT', 'OPENED'],
    alerts.newest.map((x) => [x.type, x.subject, when(x.openedAt)]),
  );
  const shown = alerts.newest.length < alerts.active ? `, the newest ${alerts.newest.length}` : '';
  return `ALERTS\n${alerts.active} active${shown}\n${table}`;
}

function sourceLine(a: StatusAnswer): string {
  const s = a.source;
  const where =
    s.kind === 'master'
      ? `master ${s.url}`
      : s.kind === 'scheduler'
        ? `scheduler ${s.url} (crawl ${s.crawl}, records to ${s.output})`
        : `the crawl's files in ${s.dir} (no scheduler is running it)`;
  return `${where}, at ${when(a.at)}`;
}

/** The status for a person: where it comes from, then runs, fleet and alerts under headings. */
export function formatStatus(a: StatusAnswer): string {
  return [sourceLine(a), runsSection(a), fleetSection(a.fleet), alertsSection(a.alerts)].join('\n\n');
}
