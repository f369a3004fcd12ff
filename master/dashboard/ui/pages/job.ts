/** One job: its settings, Start run, Edit/Delete, its schedule, its runs. */
import { del, enc, get, post } from '../api.js';
import { card, h, replace, table } from '../dom.js';
import { actionButton, pageError } from '../feedback.js';
import { ago, dateTime, num } from '../format.js';
import { href, type Page } from '../router.js';
import { stateBadge } from '../runs-view.js';
import { settingsList } from '../settings-view.js';
import type { Job, Page as ApiPage, Run } from '../types.js';
import { schedulePart } from './job-schedule.js';

export function jobPage(jobId: string): Page {
  const el = h('div', { class: 'stack' }, h('h1', {}, 'Job'), h('p', { class: 'muted' }, 'Loading…'));
  get<Job>(`/jobs/${enc(jobId)}`).then(
    (job) => build(el, job),
    (err: unknown) => replace(el, h('h1', {}, 'Job'), pageError(err)),
  );
  return { el };
}

function build(el: HTMLElement, job: Job): void {
  const runs = h('div', { 'data-testid': 'job-runs' }, h('p', { class: 'muted' }, 'Loading…'));
  const loadRuns = async (): Promise<void> => {
    try {
      const page = await get<ApiPage<Run>>(`/jobs/${enc(job.id)}/runs?limit=50`);
      const rows = page.items.map((run) =>
        h(
          'tr',
          { 'data-testid': 'job-run-row', 'data-run-id': run.id },
          h(
            'td',
            {},
            h(
              'a',
              { href: href('runs', run.id), class: 'mono', 'data-testid': 'run-link' },
              run.id.slice(0, 8),
            ),
          ),
          h('td', {}, stateBadge(run.state)),
          h('td', {}, num(run.counters.done)),
          h('td', {}, num(run.counters.failed)),
          h('td', {}, dateTime(run.createdAt)),
          h('td', {}, run.endedAt ? ago(run.endedAt) : '–'),
          h('td', {}, run.scheduledBy ? 'schedule' : 'by hand'),
        ),
      );
      replace(
        runs,
        table(
          'job-runs-table',
          ['Run', 'State', 'Done', 'Failed', 'Created', 'Ended', 'Started by'],
          rows,
          'No runs yet.',
        ),
      );
    } catch (err) {
      replace(runs, pageError(err));
    }
  };
  const start = actionButton(
    'Start run',
    { class: 'primary', 'data-testid': 'job-start-run' },
    async () => {
      const run = await post<Run>(`/jobs/${enc(job.id)}/runs`);
      location.hash = href('runs', run.id);
      return run;
    },
    { done: 'Run started.' },
  );
  const remove = actionButton(
    'Delete',
    { class: 'danger', 'data-testid': 'job-delete' },
    async () => {
      await del(`/jobs/${enc(job.id)}`);
      location.hash = '#/jobs';
    },
    { confirm: `Delete the job "${job.name}"? Its finished runs stay as history.`, done: 'Job deleted.' },
  );
  replace(
    el,
    h(
      'div',
      { class: 'title-row' },
      h('div', {}, h('h1', {}, job.name), h('p', { class: 'muted mono' }, job.id)),
      h(
        'div',
        { class: 'row' },
        start,
        h('a', { class: 'button', href: href('jobs', job.id, 'edit'), 'data-testid': 'job-edit' }, 'Edit'),
        remove,
      ),
    ),
    card('Runs', runs),
    card('Schedule', schedulePart(job.id)),
    card(
      'Settings',
      h('p', { class: 'muted' }, `Updated ${ago(job.updatedAt)}.`),
      settingsList({ ...job.settings }, 'job-settings'),
    ),
  );
  void loadRuns();
}
