/** Alerts: active and past alerts, the rules, the webhook endpoints. */
import { get } from '../api.js';
import { card, h, replace, table } from '../dom.js';
import { pageError } from '../feedback.js';
import { ago, dateTime } from '../format.js';
import type { Page } from '../router.js';
import type { Alert, Page as ApiPage } from '../types.js';
import { rulesPart } from './alert-rules.js';
import { webhooksPart } from './webhooks.js';

export function alertsPage(): Page {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const filter = h(
    'select',
    { 'data-testid': 'alerts-filter', 'aria-label': 'Which alerts' },
    h('option', { value: 'active' }, 'Active'),
    h('option', { value: '' }, 'All'),
    h('option', { value: 'resolved' }, 'Resolved'),
    h('option', { value: 'event' }, 'Events'),
  );
  filter.value = '';
  const load = async (): Promise<void> => {
    try {
      const page = await get<ApiPage<Alert>>(
        `/alerts?limit=100${filter.value ? `&state=${filter.value}` : ''}`,
      );
      replace(list, alertsTable(page.items));
    } catch (err) {
      replace(list, pageError(err));
    }
  };
  filter.addEventListener('change', () => void load());
  void load();
  const timer = window.setInterval(() => void load(), 10_000);
  const el = h(
    'div',
    { class: 'stack' },
    h('h1', {}, 'Alerts'),
    card(null, h('div', { class: 'title-row' }, h('h2', {}, 'Alerts'), filter), list),
    card('Rules', rulesPart()),
    card('Webhook endpoints', webhooksPart()),
  );
  return { el, dispose: () => clearInterval(timer) };
}

function alertsTable(alerts: Alert[]): HTMLElement {
  const rows = alerts.map((a) =>
    h(
      'tr',
      { 'data-testid': 'alert-row', 'data-state': a.state, 'data-alert-id': a.id },
      h('td', {}, h('span', { class: `badge state-${a.state}` }, a.state)),
      h('td', { class: 'mono' }, a.type),
      h('td', { class: 'wrap mono' }, a.subject),
      h('td', {}, `${dateTime(a.openedAt)} (${ago(a.openedAt)})`),
      h('td', {}, a.resolvedAt ? ago(a.resolvedAt) : '–'),
      h('td', { class: 'wrap mono muted' }, Object.keys(a.data).length === 0 ? '' : JSON.stringify(a.data)),
    ),
  );
  return table(
    'alerts-table',
    ['State', 'Type', 'Subject', 'Opened', 'Resolved', 'Data'],
    rows,
    'No alerts.',
  );
}
