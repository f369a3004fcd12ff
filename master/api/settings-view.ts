import { redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import type { TokenRow } from '../../shared/ports/sql-store.js';
import { scopeAllows } from './auth/scopes.js';

/** What a `read` caller sees for a request header's or a cookie's value. */
export const HIDDEN_VALUE = '(hidden)';

/**
 * A job's or run's settings as a caller sees them. Proxy URLs may carry a user name and password,
 * request headers (`headers`) an API key or an `Authorization`, cookies (`cookies`) a login: a
 * caller who may change the job (`operate`) sees them as saved (the dashboard's job form and
 * `ackcrawl jobs` send them back on an edit); a `read` caller sees each proxy as scheme, host and
 * port, as logs and page records show it, and every header and cookie with its value `(hidden)`.
 */
export function settingsShownTo(caller: TokenRow | null, settings: unknown): unknown {
  if (caller !== null && scopeAllows(caller.scopes, 'operate')) return settings;
  if (typeof settings !== 'object' || settings === null) return settings;
  const { proxies, headers, cookies } = settings as {
    proxies?: unknown;
    headers?: unknown;
    cookies?: unknown;
  };
  const shown: Record<string, unknown> = { ...settings };
  if (Array.isArray(proxies) && proxies.length > 0) {
    shown.proxies = proxies.map((proxy: unknown) =>
      typeof proxy === 'string' ? redactProxyUrl(proxy) : proxy,
    );
  }
  if (Array.isArray(headers) && headers.length > 0) shown.headers = hideValues(headers);
  if (Array.isArray(cookies) && cookies.length > 0) shown.cookies = hideValues(cookies);
  return shown;
}

function hideValues(entries: unknown[]): unknown[] {
  return entries.map((entry) =>
    typeof entry === 'object' && entry !== null ? { ...entry, value: HIDDEN_VALUE } : entry,
  );
}
