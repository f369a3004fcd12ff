/** Webhook endpoints: list, add (secret shown once), test, enable/disable, delete, deliveries. */
import { del, enc, errorText, get, patch, post } from '../api.js';
import { h, replace, table } from '../dom.js';
import { actionButton, runAction, showProblems } from '../feedback.js';
import { ago, dateTime } from '../format.js';
import type { Delivery, Page, Webhook } from '../types.js';
import { RULE_KINDS } from './alert-rules.js';

export function webhooksPart(): HTMLElement {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const secretBox = h('div');
  const deliveries = h('div', { 'data-testid': 'deliveries' });
  const load = async (): Promise<void> => {
    try {
      const page = await get<Page<Webhook>>('/webhooks?limit=200');
      replace(
        list,
        table(
          'webhooks-table',
          ['URL', 'Events', 'Enabled', 'Description', ''],
          page.items.map((w) => row(w, load, deliveries)),
          'No webhook endpoints.',
        ),
      );
    } catch (err) {
      replace(list, h('p', { class: 'field-error', 'data-testid': 'page-error' }, errorText(err)));
    }
  };

  const url = h('input', {
    type: 'url',
    name: 'url',
    'data-testid': 'field-webhook-url',
    required: true,
    placeholder: 'https://hooks.example.com/ackcrawl',
  });
  const description = h('input', { name: 'description', 'data-testid': 'field-webhook-description' });
  const types = [...RULE_KINDS, 'webhook.test'].map((t) =>
    h('input', { type: 'checkbox', name: 'eventTypes', value: t }),
  );
  const errors = h('div', { role: 'alert' });
  const add = h('button', { type: 'submit', class: 'primary', 'data-testid': 'webhook-add' }, 'Add endpoint');
  const form = h(
    'form',
    { class: 'stack', 'data-testid': 'webhook-form' },
    h(
      'div',
      { class: 'form-grid' },
      h('div', { class: 'form-field wide' }, h('label', {}, 'URL'), url),
      h('div', { class: 'form-field wide' }, h('label', {}, 'Description'), description),
    ),
    h(
      'fieldset',
      { class: 'chips' },
      h('legend', {}, 'Event types (none: every type)'),
      ...types.map((t) => h('label', { class: 'check chip' }, t, t.value)),
    ),
    errors,
    h('div', { class: 'row' }, add),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(errors);
    replace(secretBox);
    const body = {
      url: url.value.trim(),
      description: description.value.trim(),
      eventTypes: types.filter((t) => t.checked).map((t) => t.value),
    };
    void runAction(
      add,
      async () => {
        let made: Webhook;
        try {
          made = await post<Webhook>('/webhooks', body);
        } catch (err) {
          showProblems(errors, err);
          throw err;
        }
        replace(
          secretBox,
          h(
            'div',
            { class: 'secret', 'data-testid': 'webhook-secret' },
            h(
              'p',
              {},
              h(
                'strong',
                {},
                'Signing secret — shown only now; keep it where the receiver can check signatures:',
              ),
            ),
            h('code', { 'data-field': 'secret' }, made.secret ?? ''),
          ),
        );
        url.value = '';
        description.value = '';
        for (const t of types) t.checked = false;
        await load();
      },
      { done: 'Endpoint added.' },
    );
  });
  void load();
  return h('div', { class: 'stack' }, list, secretBox, deliveries, h('h3', {}, 'New endpoint'), form);
}

function row(hook: Webhook, reload: () => Promise<void>, deliveries: HTMLElement): HTMLElement {
  const base = `/webhooks/${enc(hook.id)}`;
  const test = actionButton(
    'Test',
    { class: 'small', 'data-testid': 'webhook-test' },
    async () => {
      const delivery = await post<Delivery>(`${base}/test`);
      await showDeliveries(hook, deliveries);
      return delivery;
    },
    {
      done: (d) =>
        `Test delivery: ${(d as Delivery).state}${(d as Delivery).lastStatus === null ? '' : ` (HTTP ${(d as Delivery).lastStatus})`}`,
    },
  );
  const history = h('button', { class: 'small', 'data-testid': 'webhook-deliveries' }, 'Deliveries');
  history.addEventListener('click', () => void runAction(history, () => showDeliveries(hook, deliveries)));
  const toggle = actionButton(
    hook.enabled ? 'Disable' : 'Enable',
    { class: 'small', 'data-testid': 'webhook-toggle' },
    async () => {
      await patch(base, { enabled: !hook.enabled });
      await reload();
    },
  );
  const remove = actionButton(
    'Delete',
    { class: 'small danger', 'data-testid': 'webhook-delete' },
    async () => {
      await del(base);
      await reload();
    },
    { confirm: `Remove the endpoint ${hook.url} and its deliveries?`, done: 'Endpoint removed.' },
  );
  return h(
    'tr',
    { 'data-testid': 'webhook-row', 'data-webhook-id': hook.id },
    h('td', { class: 'wrap mono' }, hook.url),
    h('td', {}, hook.eventTypes.length === 0 ? 'all' : hook.eventTypes.join(', ')),
    h(
      'td',
      { 'data-field': 'enabled' },
      hook.enabled ? 'yes' : `no${hook.disabledReason ? ` (${hook.disabledReason})` : ''}`,
    ),
    h('td', {}, hook.description || '–'),
    h('td', {}, h('div', { class: 'row nowrap' }, test, history, toggle, remove)),
  );
}

async function showDeliveries(hook: Webhook, box: HTMLElement): Promise<void> {
  const page = await get<Page<Delivery>>(`/webhooks/${enc(hook.id)}/deliveries?limit=50`);
  const rows = page.items.map((d) =>
    h(
      'tr',
      { 'data-testid': 'delivery-row', 'data-state': d.state },
      h('td', {}, dateTime(d.createdAt)),
      h('td', { class: 'mono' }, d.eventType),
      h('td', {}, h('span', { class: `badge state-${d.state}` }, d.state)),
      h('td', {}, String(d.attempts)),
      h('td', {}, d.lastStatus === null ? '–' : String(d.lastStatus)),
      h('td', { class: 'wrap' }, d.lastError ?? '–'),
      h('td', {}, d.nextAttemptAt ? ago(d.nextAttemptAt) : '–'),
    ),
  );
  replace(
    box,
    h('h3', {}, `Deliveries to ${hook.url}`),
    table(
      'deliveries-table',
      ['Created', 'Event', 'State', 'Attempts', 'Last status', 'Last error', 'Next attempt'],
      rows,
      'No deliveries yet.',
    ),
  );
}
