/** Jobs: each job's name, seeds, schedule and last run. */
import { enc, get, isUnavailable } from '../api.js';
import { card, h, replace, table } from '../dom.js';
import { pageError } from '../feedback.js';
import { ago, shortId } from '../format.js';
import { href, type Page } from '../router.js';
import { stateBadge } from '../runs-view.js';
import type { Job, Page as ApiPage, Run, Schedule } from '../types.js';

export function jobsPage(): Page {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const el = h(
    'div',
    { class: 'stack' },
    h(
      'div',
      { class: 'title-row' },
      h('h1', {}, 'Jobs'),
      h('a', { class: 'button primary', href: '#/jobs/new', 'data-testid': 'job-new' }, 'New job'),
    ),
    card(null, body),
  );
  void load(body);
  return { el };
}

async function load(body: HTMLElement): Promise<void> {
  let jobs: Job[];
  try {
    jobs = [];
    let after: string | null = null;
    do {
      const page: ApiPage<Job> = await get<ApiPage<Job>>(
        `/jobs?limit=200${after === null ? '' : `&after=${enc(after)}`}`,
      );
      jobs.push(...page.items);
      after = page.next;
    } while (after !== null && jobs.length < 1000);
  } catch (err) {
    replace(body, pageError(err));
    return;
  }
  const rows = jobs.map((job) => {
    const seeds = job.settings.seeds ?? [];
    const schedule = h('td', { 'data-field': 'schedule' }, '…');
    const last = h('td', { 'data-field': 'lastRun' }, '…');
    void get<Schedule>(`/jobs/${enc(job.id)}/schedule`).then(
      (s) =>
        replace(
          schedule,
          h('span', { class: 'mono' }, s.expression),
          s.enabled ? ` (${s.timeZone})` : ' (paused)',
        ),
      (err: unknown) => replace(schedule, isUnavailable(err) ? '–' : 'error'),
    );
    void get<ApiPage<Run>>(`/jobs/${enc(job.id)}/runs?limit=1`).then(
      (page) => {
        const run = page.items[0];
        if (run === undefined) replace(last, 'never');
        else
          replace(
            last,
            stateBadge(run.state, 'lastRunState'),
            ' ',
            h('a', { href: href('runs', run.id) }, ago(run.createdAt)),
          );
      },
      () => replace(last, 'error'),
    );
    return h(
      'tr',
      { 'data-testid': 'job-row', 'data-job-id': job.id },
      h('td', {}, h('a', { href: href('jobs', job.id), 'data-field': 'name' }, job.name)),
      h(
        'td',
        { class: 'wrap mono', 'data-field': 'seeds' },
        seeds.slice(0, 3).join(' '),
        seeds.length > 3 ? ` (+${seeds.length - 3})` : '',
      ),
      schedule,
      last,
      h('td', { class: 'mono muted' }, shortId(job.id)),
    );
  });
  replace(
    body,
    table(
      'jobs-table',
      ['Name', 'Seeds', 'Schedule', 'Last run', 'Id'],
      rows,
      'No jobs yet: make one with "New job".',
    ),
  );
}
