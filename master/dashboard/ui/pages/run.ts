/** One run: live state and counters, controls, throughput, hosts, failures, results, settings, "why not yet?". */
import { del, enc, get, post } from '../api.js';
import { TimeChart } from '../charts.js';
import { card, h, replace, setField } from '../dom.js';
import { pageError, runAction } from '../feedback.js';
import { ago, dateTime, dec } from '../format.js';
import { href, type Page, type PageContext } from '../router.js';
import { COUNTERS, progressBar, setProgress } from '../runs-view.js';
import { settingsList } from '../settings-view.js';
import type { LiveRun, Run } from '../types.js';
import { failuresPart, hostsPart, whyPart } from './run-parts.js';
import { resultsPart } from './run-results.js';

const POLL_MS = 5_000;

export function runPage({ live }: PageContext, runId: string): Page {
  const el = h(
    'div',
    { class: 'stack' },
    h('h1', {}, `Run ${runId}`),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  const disposers: (() => void)[] = [];
  let stopped = false;

  get<Run>(`/runs/${enc(runId)}`)
    .then((run) => {
      if (!stopped) build(run);
    })
    .catch((err: unknown) => replace(el, h('h1', {}, `Run ${runId}`), pageError(err)));

  function build(run: Run): void {
    const stateEl = h('span', { class: 'badge', 'data-testid': 'run-state' });
    const pause = h('button', { 'data-testid': 'run-pause' }, 'Pause');
    const resume = h('button', { 'data-testid': 'run-resume' }, 'Resume');
    const cancel = h('button', { class: 'danger', 'data-testid': 'run-cancel' }, 'Cancel');
    const remove = h('button', { class: 'danger', 'data-testid': 'run-delete', hidden: true }, 'Delete');
    const counters = h(
      'div',
      { class: 'counters', 'data-testid': 'run-counters' },
      ...COUNTERS.map(([name, label]) =>
        h(
          'div',
          { class: 'counter' },
          h('span', { class: 'label' }, label),
          h('span', { 'data-field': name }),
        ),
      ),
    );
    const bar = progressBar();
    bar.classList.add('big');
    const details = h('dl', { class: 'kv' });
    const chartBox = h('div', { 'data-testid': 'chart-run', class: 'chart' });
    const chart = new TimeChart(chartBox, { format: (v) => dec(v), fill: true });
    const hosts = hostsPart(runId);
    const failures = failuresPart(runId);
    const results = resultsPart(runId);

    let current: LiveRun = run;
    const show = (r: LiveRun): void => {
      current = r;
      stateEl.textContent = r.state;
      stateEl.className = `badge state-${r.state}`;
      for (const [name, , write] of COUNTERS) setField(counters, name, write(r.counters));
      setProgress(bar, r.counters, r.state);
      pause.disabled = !(r.state === 'queued' || r.state === 'running');
      resume.disabled = r.state !== 'paused';
      cancel.disabled = !(r.state === 'queued' || r.state === 'running' || r.state === 'paused');
      remove.hidden = !(r.state === 'succeeded' || r.state === 'failed' || r.state === 'cancelled');
      const rows: [string, string][] = [
        ['Created', `${dateTime(r.createdAt)} (${ago(r.createdAt)})`],
        ['Started', r.startedAt ? `${dateTime(r.startedAt)} (${ago(r.startedAt)})` : '–'],
        ['Ended', r.endedAt ? `${dateTime(r.endedAt)} (${ago(r.endedAt)})` : '–'],
        ['Not modified', String(r.counters.notModified)],
        ['Scheduler', r.schedulerId ?? '–'],
        ['Heartbeat', ago(r.heartbeatAt)],
      ];
      if (r.endsBy !== null) rows.push(['Time limit', `cancelled at ${dateTime(r.endsBy)} if not done`]);
      if (r.waiting !== null) rows.push(['Waiting', r.waiting]);
      if (r.error !== null) rows.push(['Error', r.error]);
      if (r.scheduledBy !== null) rows.push(['Scheduled', `fire time ${dateTime(r.scheduledBy.fireAt)}`]);
      replace(details, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    };
    const control = (
      button: HTMLButtonElement,
      verb: 'pause' | 'resume' | 'cancel',
      confirm?: string,
    ): void => {
      button.addEventListener('click', () => {
        void runAction(button, () => post<Run>(`/runs/${enc(runId)}/${verb}`).then(show), {
          confirm,
          done: `Run ${verb === 'cancel' ? 'cancelled' : verb === 'pause' ? 'paused' : 'resumed'}.`,
        }).then(() => show(current));
      });
    };
    control(pause, 'pause');
    control(resume, 'resume');
    control(cancel, 'cancel', 'Cancel this run? Its queued work is dropped; this cannot be undone.');
    remove.addEventListener('click', () => {
      void runAction(remove, () => del(`/runs/${enc(runId)}`), {
        confirm: 'Delete this run with its failures and results? Its job stays; this cannot be undone.',
        done: 'Run deleted.',
      }).then((deleted) => {
        if (deleted) location.assign(href('jobs', run.jobId));
      });
    });
    show(run);

    const drawChart = (): void => {
      const points = live.points;
      chart.update(
        points.map((p) => p.t),
        [{ label: 'pages/s', values: points.map((p) => p.runs[runId] ?? 0) }],
      );
    };
    let inSnapshot = false;
    disposers.push(
      live.onHistory(drawChart),
      live.onSnapshot((snapshot) => {
        const found = snapshot.runs.find((r) => r.id === runId);
        inSnapshot = found !== undefined;
        if (found) show(found);
        drawChart();
      }),
      () => chart.destroy(),
    );
    drawChart();

    const poll = (): void => {
      void hosts.refresh();
      void failures.refresh();
      void results.refresh();
      if (!inSnapshot) get<Run>(`/runs/${enc(runId)}`).then(show, () => undefined);
    };
    poll();
    const timer = window.setInterval(poll, POLL_MS);
    disposers.push(() => clearInterval(timer));

    replace(
      el,
      h(
        'div',
        { class: 'title-row' },
        h(
          'div',
          {},
          h('h1', {}, 'Run ', h('span', { class: 'mono' }, runId)),
          h('p', { class: 'muted' }, 'Job ', h('a', { href: href('jobs', run.jobId) }, run.jobId)),
        ),
        h('div', { class: 'row' }, stateEl, pause, resume, cancel, remove),
      ),
      card(null, counters, bar),
      h('div', { class: 'grid2' }, card('Throughput (pages/s)', chartBox), card('Details', details)),
      card('Top hosts', hosts.el),
      card('Failures', failures.el),
      card('Results', results.el),
      card(
        'Why not yet?',
        h('p', { class: 'muted' }, 'Where a URL is in this run and what it waits for.'),
        whyPart(runId),
      ),
      card('Settings', settingsList(run.settings, 'run-settings')),
    );
  }

  return {
    el,
    dispose() {
      stopped = true;
      for (const dispose of disposers) dispose();
    },
  };
}
