/** Toasts, the confirmation dialog, page-level errors, and buttons that call the API. */
import { ApiError, errorText } from './api.js';
import { h, replace, type Attrs, type Child } from './dom.js';

let toastBox: HTMLElement | null = null;

/** A short message at the bottom of the screen: an action's result or its error (with its code). */
export function toast(message: string, kind: 'ok' | 'error' = 'ok'): void {
  if (toastBox === null || !toastBox.isConnected) {
    toastBox = h('div', { class: 'toasts', 'aria-live': 'polite' });
    document.body.append(toastBox);
  }
  const el = h(
    'div',
    { class: `toast ${kind}`, 'data-testid': 'toast', role: kind === 'error' ? 'alert' : 'status' },
    message,
  );
  const close = h(
    'button',
    // The × is drawn by CSS, so the toast's text is the message alone.
    { class: 'toast-close', 'aria-label': 'Dismiss', onclick: () => el.remove() },
  );
  el.append(close);
  toastBox.append(el);
  window.setTimeout(() => el.remove(), kind === 'error' ? 10_000 : 4_000);
}

export function toastError(err: unknown): void {
  toast(errorText(err), 'error');
}

/** An error that stops a page from showing (its API read failed). */
export function pageError(err: unknown): HTMLElement {
  return h('div', { class: 'page-error', 'data-testid': 'page-error', role: 'alert' }, errorText(err));
}

/** A quiet note for a part of the API this master does not have. */
export function unavailable(what: string): HTMLElement {
  return h('p', { class: 'muted' }, `${what}: not available on this master.`);
}

/** Asks in a page dialog; resolves true for OK. */
export function confirmDialog(message: string, okLabel = 'OK'): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm' });
    const done = (answer: boolean): void => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.append(
      h('p', {}, message),
      h(
        'div',
        { class: 'actions' },
        h('button', { 'data-testid': 'confirm-cancel', onclick: () => done(false) }, 'Cancel'),
        h('button', { class: 'danger', 'data-testid': 'confirm-ok', onclick: () => done(true) }, okLabel),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export interface ActionOptions {
  /** Asked first, in the confirmation dialog. */
  confirm?: string;
  /** Toasted when it worked. */
  done?: string | ((result: unknown) => string);
}

/**
 * A button that runs an API call: disabled while it runs, its error toasted with its code, its
 * success toasted when `done` says what to say.
 */
export function actionButton(
  label: Child,
  attrs: Attrs,
  action: () => Promise<unknown>,
  options: ActionOptions = {},
): HTMLButtonElement {
  const button = h('button', { type: 'button', ...attrs }, label);
  button.addEventListener('click', () => void runAction(button, action, options));
  return button;
}

export async function runAction(
  button: HTMLButtonElement | null,
  action: () => Promise<unknown>,
  options: ActionOptions = {},
): Promise<boolean> {
  if (options.confirm !== undefined && !(await confirmDialog(options.confirm))) return false;
  if (button) button.disabled = true;
  try {
    const result = await action();
    if (options.done !== undefined)
      toast(typeof options.done === 'string' ? options.done : options.done(result));
    return true;
  } catch (err) {
    toastError(err);
    return false;
  } finally {
    if (button) button.disabled = false;
  }
}

/** A 400's problems, each as `field: message`, in `into` (a form's list of errors); others clear it. */
export function showProblems(into: Element, err: unknown): void {
  const problems = err instanceof ApiError ? err.problems : [];
  replace(
    into,
    ...problems.map((p) =>
      h(
        'p',
        { class: 'field-error', 'data-testid': 'field-error', 'data-field': p.field },
        `${p.field}: ${p.message}`,
      ),
    ),
  );
}
