/** Alert rules: list, make, enable/disable, delete. */
import { del, enc, errorText, get, patch, post } from '../api.js';
import { h, replace, table } from '../dom.js';
import { actionButton, runAction, showProblems } from '../feedback.js';
import { ago } from '../format.js';
import type { AlertRule, Page } from '../types.js';

export const RULE_KINDS = [
  'agent.lost',
  'process.crash_loop',
  'errors.rate',
  'run.stuck',
  'dlq.growing',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
];

/** What params each kind takes, as a starting point in the params box. */
const PARAM_HINT: Record<string, string> = {
  'errors.rate': '{ "perMinute": 60 }',
  'run.stuck': '{ "minutes": 10 }',
  'dlq.growing': '{ "windowMs": 300000, "minIncrease": 1 }',
};

export function rulesPart(): HTMLElement {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const load = async (): Promise<void> => {
    try {
      const page = await get<Page<AlertRule>>('/alert-rules?limit=200');
      replace(
        list,
        table(
          'rules-table',
          ['Name', 'Kind', 'Params', 'Enabled', 'Status', ''],
          page.items.map((r) => row(r, load)),
          'No rules.',
        ),
      );
    } catch (err) {
      replace(list, h('p', { class: 'field-error', 'data-testid': 'page-error' }, errorText(err)));
    }
  };

  const name = h('input', {
    name: 'name',
    'data-testid': 'field-rule-name',
    required: true,
    placeholder: 'Crawler errors',
  });
  const kind = h(
    'select',
    { name: 'kind', 'data-testid': 'field-rule-kind' },
    ...RULE_KINDS.map((k) => h('option', { value: k }, k)),
  );
  const params = h('textarea', {
    name: 'params',
    'data-testid': 'field-rule-params',
    rows: 2,
    placeholder: '{}',
  });
  const showHint = (): void => {
    params.placeholder = PARAM_HINT[kind.value] ?? '{} (none)';
  };
  kind.addEventListener('change', showHint);
  showHint();
  const errors = h('div', { role: 'alert' });
  const add = h('button', { type: 'submit', class: 'primary', 'data-testid': 'rule-add' }, 'Add rule');
  const form = h(
    'form',
    { class: 'stack', 'data-testid': 'rule-form' },
    h(
      'div',
      { class: 'form-grid' },
      h('div', { class: 'form-field' }, h('label', {}, 'Name'), name),
      h('div', { class: 'form-field' }, h('label', {}, 'Kind'), kind),
      h('div', { class: 'form-field wide' }, h('label', {}, 'Params (JSON)'), params),
    ),
    errors,
    h('div', { class: 'row' }, add),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    replace(errors);
    let parsed: unknown = {};
    try {
      parsed = params.value.trim() === '' ? {} : JSON.parse(params.value);
    } catch (err) {
      replace(
        errors,
        h(
          'p',
          { class: 'field-error', 'data-testid': 'field-error', 'data-field': 'params' },
          `Not valid JSON: ${(err as Error).message}`,
        ),
      );
      return;
    }
    void runAction(
      add,
      async () => {
        try {
          await post('/alert-rules', { name: name.value.trim(), kind: kind.value, params: parsed });
        } catch (err) {
          showProblems(errors, err);
          throw err;
        }
        name.value = '';
        params.value = '';
        await load();
      },
      { done: 'Rule added.' },
    );
  });
  void load();
  return h('div', { class: 'stack' }, list, h('h3', {}, 'New rule'), form);
}

function row(rule: AlertRule, reload: () => Promise<void>): HTMLElement {
  const base = `/alert-rules/${enc(rule.id)}`;
  const toggle = actionButton(
    rule.enabled ? 'Disable' : 'Enable',
    { class: 'small', 'data-testid': 'rule-toggle' },
    async () => {
      await patch(base, { enabled: !rule.enabled });
      await reload();
    },
    { done: rule.enabled ? 'Rule disabled.' : 'Rule enabled.' },
  );
  const remove = actionButton(
    'Delete',
    { class: 'small danger', 'data-testid': 'rule-delete' },
    async () => {
      await del(base);
      await reload();
    },
    {
      confirm: `Delete the rule "${rule.name}"? Its active alerts resolve; its history stays.`,
      done: 'Rule deleted.',
    },
  );
  const status =
    rule.status === null
      ? 'not evaluated yet'
      : rule.status.available
        ? `checked ${ago(rule.status.evaluatedAt)}`
        : `unavailable: ${rule.status.reason ?? ''}`;
  return h(
    'tr',
    { 'data-testid': 'rule-row', 'data-rule-id': rule.id, 'data-enabled': String(rule.enabled) },
    h('td', {}, rule.name),
    h('td', { class: 'mono' }, rule.kind),
    h('td', { class: 'mono' }, Object.keys(rule.params).length === 0 ? '–' : JSON.stringify(rule.params)),
    h('td', { 'data-field': 'enabled' }, rule.enabled ? 'yes' : 'no'),
    h('td', { class: 'muted' }, status),
    h('td', {}, h('div', { class: 'row nowrap' }, toggle, remove)),
  );
}
