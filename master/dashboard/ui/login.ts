/** The token form: shown when no token is stored or the API refuses the one that is. */
import { errorText, request, setToken } from './api.js';
import { h } from './dom.js';

export function loginPage(onLoggedIn: () => void, reason?: string): HTMLElement {
  const token = h('input', {
    type: 'password',
    name: 'token',
    id: 'login-token',
    autocomplete: 'current-password',
    required: true,
    'data-testid': 'login-token',
    placeholder: 'ackp_…',
  });
  const remember = h('input', { type: 'checkbox', id: 'login-remember', name: 'remember' });
  const error = h('p', {
    class: 'field-error',
    'data-testid': 'login-error',
    role: 'alert',
    hidden: reason === undefined,
  });
  if (reason !== undefined) error.textContent = reason;
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'login-submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'login card' },
    h('h1', {}, 'ackcrawl'),
    h('p', { class: 'muted' }, 'Paste an API token (the admin token is printed when the master starts).'),
    h('label', { for: 'login-token' }, 'Token'),
    token,
    h('label', { class: 'check' }, remember, ' Remember on this device'),
    error,
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = token.value.trim();
    if (value === '') return;
    submit.disabled = true;
    error.hidden = true;
    // Any read that needs a token tells whether this one is good.
    request('GET', '/jobs?limit=1', { token: value })
      .then(() => {
        setToken(value, remember.checked);
        onLoggedIn();
      })
      .catch((err: unknown) => {
        error.textContent = errorText(err);
        error.hidden = false;
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return h('main', { class: 'login-wrap' }, form);
}
