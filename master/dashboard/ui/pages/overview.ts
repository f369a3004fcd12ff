/** Overview: runs with live progress, the throughput and error charts, fleet health, active alerts. */
import { get } from '../api.js';
import { errorSeries, TimeChart, times } from '../charts.js';
import { card, field, h, liveTable, replace, setField, syncRows } from '../dom.js';
import { ago, dec, shortId } from '../format.js';
import { href, type Page, type PageContext } from '../router.js';
import { COUNTERS, progressBar, setProgress, stateBadge } from '../runs-view.js';
import type { Agent, Alert, Job, LiveRun, LiveSnapshot, Page as ApiPage } from '../types.js';

export function overviewPage({ live }: PageContext): Page {
  const jobNames = new Map<string, string>();
  const runs = liveTable('runs-table', [
    'Run',
    'Job',
    'State',
    'Progress',
    ...COUNTERS.map((c) => c[1]),
    'Started',
  ]);
  const pagesBox = h('div', { 'data-testid': 'chart-pages', class: 'chart' });
  const errorsBox = h('div', { 'data-testid': 'chart-errors', class: 'chart' });
  const fleet = h(
    'div',
    { 'data-testid': 'fleet-summary', class: 'summary' },
    h('p', { class: 'muted' }, 'Waiting for live data…'),
  );
  const alerts = h(
    'div',
    { 'data-testid': 'active-alerts' },
    h('p', { class: 'muted' }, 'Waiting for live data…'),
  );
  const pagesChart = new TimeChart(pagesBox, { format: (v) => dec(v), fill: true });
  const errorsChart = new TimeChart(errorsBox, { format: (v) => dec(v) });

  const el = h(
    'div',
    { class: 'stack' },
    h('h1', {}, 'Overview'),
    card('Runs', runs.wrap),
    h(
      'div',
      { class: 'grid2' },
      card('Pages per second', pagesBox),
      card('Errors by code (per second)', errorsBox),
    ),
    h('div', { class: 'grid2' }, card('Fleet', fleet), card('Active alerts', alerts)),
  );

  const createRow = (run: LiveRun): HTMLElement =>
    h(
      'tr',
      { 'data-testid': 'run-row', 'data-run-id': run.id },
      h(
        'td',
        {},
        h('a', { href: href('runs', run.id), 'data-testid': 'run-link', class: 'mono' }, shortId(run.id)),
      ),
      h('td', { 'data-field': 'job' }),
      h('td', {}, stateBadge(run.state)),
      h('td', {}, progressBar()),
      ...COUNTERS.map(([name]) => field(name, '', 'td')),
      h('td', { 'data-field': 'started' }),
    );
  const updateRow = (row: HTMLElement, run: LiveRun): void => {
    row.dataset['state'] = run.state;
    const badge = row.querySelector<HTMLElement>('.badge');
    if (badge) {
      badge.className = `badge state-${run.state}`;
      badge.textContent = run.state;
    }
    setField(row, 'job', jobNames.get(run.jobId) ?? shortId(run.jobId));
    for (const [name, , show] of COUNTERS) setField(row, name, show(run.counters));
    setField(row, 'started', ago(run.startedAt ?? run.createdAt));
    const bar = row.querySelector<HTMLElement>('.progress');
    if (bar) setProgress(bar, run.counters, run.state);
    if (run.waiting !== null) row.title = run.waiting;
    else row.removeAttribute('title');
  };

  const drawCharts = (): void => {
    const points = live.points;
    pagesChart.update(times(points), [{ label: 'pages/s', values: points.map((p) => p.pagesPerSecond) }]);
    errorsChart.update(times(points), errorSeries(points));
  };

  const show = (snapshot: LiveSnapshot): void => {
    syncRows(runs.body, snapshot.runs, (r) => r.id, createRow, updateRow, {
      text: 'No runs yet. Start one from a job.',
      colspan: 10,
    });
    replace(fleet, ...fleetSummary(snapshot.agents));
    replace(alerts, alertList(snapshot.alerts));
    drawCharts();
  };

  get<ApiPage<Job>>('/jobs?limit=500')
    .then((page) => {
      for (const job of page.items) jobNames.set(job.id, job.name);
      if (live.latest) show(live.latest);
    })
    .catch(() => undefined); // names are a nicety: ids are shown without them
  const offHistory = live.onHistory(drawCharts);
  const offSnapshot = live.onSnapshot(show);
  if (live.latest) show(live.latest);
  else drawCharts();

  return {
    el,
    dispose() {
      offHistory();
      offSnapshot();
      pagesChart.destroy();
      errorsChart.destroy();
    },
  };
}

function count<T extends string>(values: T[]): [T, number][] {
  const counts = new Map<T, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0].localeCompare(b[0]));
}

function fleetSummary(agents: Agent[]): HTMLElement[] {
  if (agents.length === 0) return [h('p', { class: 'muted' }, 'No agents have registered.')];
  const chips = (pairs: [string, number][]): HTMLElement =>
    h(
      'div',
      { class: 'chips' },
      ...pairs.map(([state, n]) => h('span', { class: `chip state-${state}` }, `${n} ${state}`)),
    );
  return [
    h('p', {}, h('strong', {}, 'Agents: '), chips(count(agents.map((a) => a.state)))),
    h(
      'p',
      {},
      h('strong', {}, 'Processes: '),
      chips(count(agents.flatMap((a) => a.processes.map((p) => p.state)))),
    ),
    h('a', { href: '#/fleet' }, 'Fleet →'),
  ];
}

export function alertList(alerts: Alert[]): HTMLElement {
  if (alerts.length === 0) return h('p', { class: 'muted' }, 'No active alerts.');
  return h(
    'ul',
    { class: 'alerts' },
    ...alerts.map((a) =>
      h(
        'li',
        { class: 'alert-item', 'data-state': a.state },
        h('span', { class: 'badge state-failed' }, a.type),
        ' ',
        a.subject,
        h('span', { class: 'muted' }, ` · since ${ago(a.openedAt)}`),
      ),
    ),
  );
}
