/** The run page's polled parts: top hosts, failures (with retry), and "why not yet?". */
import { ApiError, enc, errorText, get, getFirst, isUnavailable, post } from '../api.js';
import { h, liveTable, replace, setField, syncRows } from '../dom.js';
import { toast } from '../feedback.js';
import { ago, dateTime, ms, num } from '../format.js';
import type { Failure, HostState, WhyAnswer } from '../types.js';

export function hostsPart(runId: string): { el: HTMLElement; refresh(): Promise<void> } {
  const note = h('p', { class: 'muted' });
  const table = liveTable('hosts-table', [
    'Host',
    'In flight',
    'Delay',
    'Crawl-delay',
    'Next start',
    'Cool-down until',
    'Reason',
    'Queued',
    'Fetched',
    'Last active',
  ]);
  const el = h('div', {}, table.wrap, note);
  const cells = [
    'inFlight',
    'delayMs',
    'crawlDelayMs',
    'nextStartAt',
    'pausedUntil',
    'pauseReason',
    'queued',
    'fetched',
    'lastActiveAt',
  ];
  const create = (host: HostState): HTMLElement =>
    h(
      'tr',
      { 'data-testid': 'host-row', 'data-host': host.host },
      h('td', { 'data-field': 'host' }, host.host),
      ...cells.map((name) => h('td', { 'data-field': name })),
    );
  const update = (row: HTMLElement, host: HostState): void => {
    setField(row, 'inFlight', `${num(host.inFlight)} / ${num(host.concurrency)}`);
    setField(row, 'delayMs', ms(host.delayMs));
    setField(row, 'crawlDelayMs', host.crawlDelayMs ? ms(host.crawlDelayMs) : '–');
    setField(row, 'nextStartAt', host.nextStartAt ? ago(host.nextStartAt) : '–');
    setField(
      row,
      'pausedUntil',
      host.pausedUntil ? `${dateTime(host.pausedUntil)} (${ago(host.pausedUntil)})` : '–',
    );
    setField(row, 'pauseReason', host.pauseReason ?? '–');
    setField(row, 'queued', host.queued === undefined ? '–' : num(host.queued));
    setField(row, 'fetched', host.fetched === undefined ? '–' : num(host.fetched));
    setField(row, 'lastActiveAt', host.lastActiveAt ? ago(host.lastActiveAt) : '–');
  };
  const empty = (text: string): void =>
    syncRows(table.body, [], (x: HostState) => x.host, create, update, { text, colspan: 10 });
  /** A master without the route: asked no more. */
  let gone = false;
  return {
    el,
    async refresh() {
      if (gone) return;
      try {
        const answer = await get<{ items: HostState[]; note?: string | null }>(
          `/runs/${enc(runId)}/hosts?limit=20`,
        );
        syncRows(table.body, answer.items, (x) => x.host, create, update, {
          text: 'No hosts in flight or waiting.',
          colspan: 10,
        });
        note.textContent = answer.note ?? '';
      } catch (err) {
        if (!isUnavailable(err)) {
          note.textContent = errorText(err);
          return;
        }
        // 404 NOT_FOUND: this master has no such route; 503: no scheduler can say now (asked again).
        if (err instanceof ApiError && err.status === 404 && err.code === 'NOT_FOUND') gone = true;
        empty('Not available.');
        note.textContent = `Host politeness state not available (${errorText(err)}).`;
      }
    },
  };
}

export function failuresPart(runId: string): { el: HTMLElement; refresh(): Promise<void> } {
  const table = liveTable('failures-table', ['URL', 'Code', 'Attempts', 'Last error', 'Status', 'At', '']);
  const status = h('p', { class: 'muted' });
  const el = h('div', {}, table.wrap, status);
  let shown = 100;
  const more = h('button', { class: 'small', hidden: true }, 'Show more');
  more.addEventListener('click', () => {
    shown += 100;
    void refresh();
  });
  el.append(more);

  const retry = (failure: Failure, button: HTMLButtonElement): void => {
    button.disabled = true;
    post(`/runs/${enc(runId)}/failures/${enc(failure.id)}/retry`)
      .then(() => {
        toast(`Queued again: ${failure.url}`);
        button.textContent = 'Retried';
        void refresh();
      })
      .catch((err: unknown) => {
        button.disabled = false;
        toast(isUnavailable(err) ? `Retry not available (${errorText(err)})` : errorText(err), 'error');
      });
  };
  const create = (failure: Failure): HTMLElement => {
    const button = h('button', { class: 'small', 'data-testid': 'failure-retry' }, 'Retry');
    button.addEventListener('click', () => retry(failure, button));
    return h(
      'tr',
      { 'data-testid': 'failure-row', 'data-failure-id': failure.id },
      h('td', { class: 'wrap mono', 'data-field': 'url' }, failure.url),
      h('td', { 'data-field': 'code' }, failure.code),
      h('td', { 'data-field': 'attempts' }),
      h('td', { class: 'wrap', 'data-field': 'lastError' }),
      h('td', { 'data-field': 'final' }),
      h('td', { 'data-field': 'at' }),
      h('td', {}, button),
    );
  };
  const update = (row: HTMLElement, failure: Failure): void => {
    setField(row, 'attempts', num(failure.attempts));
    setField(row, 'lastError', failure.lastError);
    const retried = failure.retriedAt ? `retried ${ago(failure.retriedAt)}` : null;
    setField(row, 'final', retried ?? (failure.final ? 'final' : 'will retry'));
    setField(row, 'at', ago(failure.at));
    row.dataset['final'] = String(failure.final);
    const button = row.querySelector<HTMLButtonElement>('[data-testid="failure-retry"]');
    if (button) button.hidden = !failure.final || Boolean(failure.retriedAt);
  };

  async function refresh(): Promise<void> {
    try {
      const { items, more: hasMore } = await getFirst<Failure>(`/runs/${enc(runId)}/failures`, shown, 100);
      more.hidden = !hasMore;
      syncRows(table.body, items, (f) => f.id, create, update, {
        text: 'No failures.',
        colspan: 7,
      });
      status.textContent = '';
    } catch (err) {
      status.textContent = errorText(err);
    }
  }
  return { el, refresh };
}

export function whyPart(runId: string): HTMLElement {
  const input = h('input', {
    type: 'url',
    name: 'url',
    'data-testid': 'why-url',
    placeholder: 'https://…',
    required: true,
    class: 'grow',
  });
  const submit = h('button', { type: 'submit', 'data-testid': 'why-submit' }, 'Ask');
  const answer = h('div', { 'data-testid': 'why-answer', 'aria-live': 'polite' });
  const form = h('form', { class: 'row' }, input, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    replace(answer, h('p', { class: 'muted' }, 'Asking…'));
    get<WhyAnswer>(`/runs/${enc(runId)}/why?url=${enc(input.value.trim())}`)
      .then((why) => replace(answer, whyView(why)))
      .catch((err: unknown) =>
        replace(answer, h('p', { class: 'field-error', role: 'alert' }, errorText(err))),
      )
      .finally(() => {
        submit.disabled = false;
      });
  });
  return h('div', {}, form, answer);
}

function whyView(why: WhyAnswer): HTMLElement {
  const dl = h(
    'dl',
    { class: 'kv' },
    h('dt', {}, 'State'),
    h('dd', {}, h('span', { class: `badge state-${why.state}`, 'data-field': 'state' }, why.state)),
    h('dt', {}, 'Why'),
    h('dd', { 'data-field': 'reason' }, why.reason),
    h('dt', {}, 'Normalised'),
    h('dd', { class: 'mono' }, why.normalized),
  );
  if (why.duplicateOf !== null)
    dl.append(h('dt', {}, 'Duplicate of'), h('dd', { class: 'mono' }, why.duplicateOf));
  const el = h('div', {}, dl);
  for (const part of ['task', 'host', 'crawler', 'robots'] as const) {
    const value = why[part];
    if (value !== null) el.append(h('h3', {}, part), h('pre', {}, JSON.stringify(value, null, 2)));
  }
  return el;
}
