/** Make or edit a job: the common settings as inputs, every other one in the advanced JSON box. */
import { ApiError, enc, errorText, get, patch, post, type Problem } from '../api.js';
import { card, h, replace } from '../dom.js';
import { pageError, toast } from '../feedback.js';
import { href, type Page } from '../router.js';
import type { Job } from '../types.js';
import { FIELD_NAMES, FIELDS, type FieldSpec } from './job-fields.js';

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

export function jobFormPage(jobId: string | null): Page {
  const el = h('div', { class: 'stack' }, h('h1', {}, jobId === null ? 'New job' : 'Edit job'));
  if (jobId === null) el.append(buildForm(null));
  else {
    const loading = h('p', { class: 'muted' }, 'Loading…');
    el.append(loading);
    get<Job>(`/jobs/${enc(jobId)}`).then(
      (job) => loading.replaceWith(buildForm(job)),
      (err: unknown) => loading.replaceWith(pageError(err)),
    );
  }
  return { el };
}

function control(spec: FieldSpec, value: unknown): Control {
  const common = { name: spec.name, id: `field-${spec.name}`, 'data-testid': `field-${spec.name}` };
  switch (spec.kind) {
    case 'seeds':
    case 'lines':
      return h('textarea', {
        ...common,
        rows: spec.kind === 'seeds' ? 4 : 2,
        placeholder: spec.placeholder ?? 'https://example.com/',
        value: Array.isArray(value) ? value.join('\n') : '',
      });
    case 'select':
      return h(
        'select',
        { ...common, value: typeof value === 'string' ? value : String(spec.defaultValue ?? '') },
        ...(spec.options ?? []).map((o) => h('option', { value: o }, o)),
      );
    case 'checkbox':
      return h('input', {
        ...common,
        type: 'checkbox',
        checked: typeof value === 'boolean' ? value : spec.defaultValue === true,
      });
    case 'number':
      return h('input', {
        ...common,
        type: 'number',
        inputmode: 'numeric',
        min: spec.min,
        max: spec.max,
        step: 1,
        placeholder: spec.defaultValue === undefined ? '' : String(spec.defaultValue),
        value: typeof value === 'number' ? String(value) : '',
      });
    case 'text':
      return h('input', {
        ...common,
        type: 'text',
        value: typeof value === 'string' ? value : '',
        required: spec.name === 'name',
      });
  }
}

function readControl(spec: FieldSpec, input: Control): unknown {
  if (spec.kind === 'checkbox') return (input as HTMLInputElement).checked;
  const raw = input.value.trim();
  if (spec.kind === 'seeds' || spec.kind === 'lines')
    return raw
      .split('\n')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  if (raw === '') return undefined;
  if (spec.kind === 'number') return Number(raw);
  return raw;
}

function buildForm(job: Job | null): HTMLElement {
  const values: Record<string, unknown> = job === null ? {} : { ...job.settings, name: job.name };
  const inputs = new Map<string, Control>();
  const grid = h('div', { class: 'form-grid' });
  for (const spec of FIELDS) {
    const input = control(spec, values[spec.name]);
    inputs.set(spec.name, input);
    const hint = h('span', { class: 'hint' }, spec.hint);
    grid.append(
      spec.kind === 'checkbox'
        ? h('div', { class: 'form-field' }, h('label', { class: 'check' }, input, spec.label), hint)
        : h(
            'div',
            { class: `form-field${spec.wide ? ' wide' : ''}` },
            h('label', { for: input.id }, spec.label),
            input,
            hint,
          ),
    );
  }
  const rest = Object.fromEntries(Object.entries(values).filter(([k]) => !FIELD_NAMES.has(k)));
  const advanced = h('textarea', {
    name: 'advanced',
    id: 'advanced-settings',
    'data-testid': 'advanced-settings',
    rows: 10,
    spellcheck: 'false',
    value: JSON.stringify(rest, null, 2),
  });
  const formErrors = h('ul', { class: 'form-errors', 'data-testid': 'form-errors', role: 'alert' });
  const save = h(
    'button',
    { type: 'submit', class: 'primary', 'data-testid': 'job-save' },
    job === null ? 'Create job' : 'Save changes',
  );
  const form = h(
    'form',
    { 'data-testid': 'job-form', novalidate: true, class: 'stack' },
    card('Settings', grid),
    card(
      'Advanced settings (JSON)',
      h(
        'p',
        { class: 'muted' },
        'Any other setting of the job (docs/crawl-settings.md), merged into the body; the fields above win.',
      ),
      advanced,
    ),
    formErrors,
    h(
      'div',
      { class: 'row' },
      save,
      h('a', { class: 'button', href: job === null ? '#/jobs' : href('jobs', job.id) }, 'Cancel'),
    ),
  );

  const clearErrors = (): void => {
    for (const e of form.querySelectorAll('[data-testid="field-error"]')) e.remove();
    replace(formErrors);
  };
  /** The input a problem's field belongs to: `seeds.0` → seeds, `name` → name, else the advanced box if it is there. */
  const inputFor = (field: string): Control | null => {
    const parts = field.split('.');
    for (let n = parts.length; n > 0; n--) {
      const input = inputs.get(parts.slice(0, n).join('.'));
      if (input) return input;
    }
    return null;
  };
  const showProblem = (problem: Problem): void => {
    const input = inputFor(problem.field);
    if (input === null) {
      formErrors.append(
        h('li', { 'data-field': problem.field }, `${problem.field || 'body'}: ${problem.message}`),
      );
      return;
    }
    const error = h(
      'p',
      { class: 'field-error', 'data-testid': 'field-error', 'data-field': problem.field },
      problem.message,
    );
    // After the input and any errors already shown for it.
    let anchor: Element = input.type === 'checkbox' ? (input.closest('label') ?? input) : input;
    while (anchor.nextElementSibling?.getAttribute('data-testid') === 'field-error')
      anchor = anchor.nextElementSibling;
    anchor.after(error);
    input.setAttribute('aria-invalid', 'true');
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors();
    for (const input of inputs.values()) input.removeAttribute('aria-invalid');
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = advanced.value.trim() === '' ? {} : JSON.parse(advanced.value);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('must be a JSON object');
      body = parsed as Record<string, unknown>;
    } catch (err) {
      advanced.after(
        h(
          'p',
          { class: 'field-error', 'data-testid': 'field-error', 'data-field': 'advanced' },
          `Not valid JSON: ${(err as Error).message}`,
        ),
      );
      return;
    }
    for (const spec of FIELDS) {
      const input = inputs.get(spec.name);
      if (input === undefined) continue;
      const value = readControl(spec, input);
      if (value !== undefined) body[spec.name] = value;
    }
    save.disabled = true;
    const saving = job === null ? post<Job>('/jobs', body) : patch<Job>(`/jobs/${enc(job.id)}`, body);
    saving
      .then((saved) => {
        toast(job === null ? `Job "${saved.name}" created.` : `Job "${saved.name}" saved.`);
        location.hash = href('jobs', saved.id);
      })
      .catch((err: unknown) => {
        const problems = err instanceof ApiError ? err.problems : [];
        if (problems.length === 0) formErrors.append(h('li', {}, errorText(err)));
        for (const problem of problems) showProblem(problem);
        toast(errorText(err), 'error');
        form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      })
      .finally(() => {
        save.disabled = false;
      });
  });
  return form;
}
