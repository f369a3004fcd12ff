/** A job's cron schedule: set, pause, resume, remove; its next fire times and fire history. */
import { ApiError, del, enc, errorText, get, post, put } from '../api.js';
import { h, replace, table } from '../dom.js';
import { runAction } from '../feedback.js';
import { ago, dateTime } from '../format.js';
import { href } from '../router.js';
import type { Fire, Page, Schedule } from '../types.js';

export function schedulePart(jobId: string): HTMLElement {
  const base = `/jobs/${enc(jobId)}/schedule`;
  const status = h('p', { class: 'muted' }, 'Loading…');
  const expression = h('input', {
    name: 'expression',
    'data-testid': 'field-expression',
    placeholder: '0 3 * * *',
    required: true,
    class: 'mono',
  });
  const timeZone = h('input', {
    name: 'timeZone',
    'data-testid': 'field-timeZone',
    placeholder: 'UTC',
    value: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const overlap = h(
    'select',
    { name: 'overlap', 'data-testid': 'field-overlap' },
    ...['skip', 'queue', 'allow'].map((o) => h('option', { value: o }, o)),
  );
  const misfire = h(
    'select',
    { name: 'misfire', 'data-testid': 'field-misfire' },
    ...['run-once', 'skip'].map((o) => h('option', { value: o }, o)),
  );
  const formError = h('div', { role: 'alert' });
  const save = h(
    'button',
    { type: 'submit', class: 'primary', 'data-testid': 'schedule-save' },
    'Save schedule',
  );
  const pause = h('button', { type: 'button', 'data-testid': 'schedule-pause' }, 'Pause');
  const resume = h('button', { type: 'button', 'data-testid': 'schedule-resume' }, 'Resume');
  const remove = h('button', { type: 'button', class: 'danger', 'data-testid': 'schedule-remove' }, 'Remove');
  const labelled = (label: string, input: HTMLElement, hint: string): HTMLElement => {
    input.id = `schedule-${input.getAttribute('name') ?? ''}`;
    return h(
      'div',
      { class: 'form-field' },
      h('label', { for: input.id }, label),
      input,
      h('span', { class: 'hint' }, hint),
    );
  };
  const form = h(
    'form',
    { 'data-testid': 'schedule-form', class: 'stack' },
    h(
      'div',
      { class: 'form-grid' },
      labelled('Cron expression', expression, 'minute hour day month weekday (5 fields, or 6 with seconds).'),
      labelled('Time zone', timeZone, 'IANA name, e.g. Europe/Berlin.'),
      labelled('Overlap', overlap, 'When the last run is still active: skip, queue, or allow a second.'),
      labelled('Misfire', misfire, 'Fire times missed while down: run once, or skip.'),
    ),
    formError,
    h('div', { class: 'row' }, save, pause, resume, remove),
  );
  const next = h('ol', { 'data-testid': 'next-fires', class: 'mono' });
  const fires = h('div');
  const el = h(
    'div',
    {},
    status,
    form,
    h('h3', {}, 'Next fire times'),
    next,
    h('h3', {}, 'Fire history'),
    fires,
  );

  const show = (schedule: Schedule | null): void => {
    pause.disabled = schedule === null || !schedule.enabled;
    resume.disabled = schedule === null || schedule.enabled;
    remove.disabled = schedule === null;
    if (schedule === null) {
      status.textContent = 'No schedule: runs start only by hand.';
      replace(next, h('li', { class: 'muted' }, 'None.'));
      replace(fires);
      return;
    }
    status.textContent = `${schedule.enabled ? 'Active' : 'Paused'} · ${schedule.expression} (${schedule.timeZone})${schedule.waitingFireAt ? ` · a fire time waits: ${dateTime(schedule.waitingFireAt)}` : ''}`;
    expression.value = schedule.expression;
    timeZone.value = schedule.timeZone;
    overlap.value = schedule.overlap;
    misfire.value = schedule.misfire;
    replace(
      next,
      ...(schedule.nextFireTimes.length === 0
        ? [h('li', { class: 'muted' }, schedule.enabled ? 'None.' : 'Paused: none until resumed.')]
        : schedule.nextFireTimes.map((t) => h('li', {}, `${dateTime(t)} (${ago(t)})`))),
    );
    void loadFires();
  };
  const load = async (): Promise<void> => {
    try {
      show(await get<Schedule>(`${base}?next=5`));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) show(null);
      else status.textContent = errorText(err);
    }
  };
  const loadFires = async (): Promise<void> => {
    try {
      const page = await get<Page<Fire>>(`${base}/fires?limit=20`);
      const rows = page.items.map((f) =>
        h(
          'tr',
          { 'data-testid': 'fire-row' },
          h('td', {}, dateTime(f.fireAt)),
          h('td', {}, h('span', { class: `badge state-${f.outcome}` }, f.outcome)),
          h(
            'td',
            {},
            f.runId === null
              ? '–'
              : h('a', { href: href('runs', f.runId), class: 'mono' }, f.runId.slice(0, 8)),
          ),
          h('td', {}, f.missed > 0 ? `${f.missed} missed` : ''),
          h('td', { class: 'muted' }, `claimed by ${f.claimedBy} ${ago(f.claimedAt)}`),
        ),
      );
      replace(
        fires,
        table(
          'fires-table',
          ['Fire time', 'Outcome', 'Run', 'Missed', 'Claimed'],
          rows,
          'No fire times yet.',
        ),
      );
    } catch (err) {
      replace(fires, h('p', { class: 'field-error' }, errorText(err)));
    }
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(formError);
    const body = {
      expression: expression.value.trim(),
      timeZone: timeZone.value.trim() || undefined,
      overlap: overlap.value,
      misfire: misfire.value,
    };
    void runAction(
      save,
      async () => {
        try {
          show(await put<Schedule>(base, body));
        } catch (err) {
          const problems = err instanceof ApiError ? err.problems : [];
          replace(
            formError,
            ...(problems.length > 0
              ? problems.map((p) =>
                  h(
                    'p',
                    { class: 'field-error', 'data-testid': 'field-error', 'data-field': p.field },
                    `${p.field}: ${p.message}`,
                  ),
                )
              : [h('p', { class: 'field-error' }, errorText(err))]),
          );
          throw err;
        }
      },
      { done: 'Schedule saved.' },
    );
  });
  pause.addEventListener(
    'click',
    () =>
      void runAction(pause, async () => show(await post<Schedule>(`${base}/pause`)), {
        done: 'Schedule paused.',
      }),
  );
  resume.addEventListener(
    'click',
    () =>
      void runAction(resume, async () => show(await post<Schedule>(`${base}/resume`)), {
        done: 'Schedule resumed.',
      }),
  );
  remove.addEventListener(
    'click',
    () =>
      void runAction(
        remove,
        async () => {
          await del(base);
          show(null);
        },
        { confirm: 'Remove this schedule? Runs it started stay.', done: 'Schedule removed.' },
      ),
  );
  void load();
  return el;
}
