import { redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import { redactRequestHeaders, type RequestHeader } from '../../shared/protocol/request-headers.js';
import type { TokenRow } from '../../shared/ports/sql-store.js';
import { scopeAllows } from './auth/scopes.js';

/**
 * A job's or run's settings as a caller sees them. Proxy URLs may carry a user name and password:
 * a caller who may change the job (`operate`) sees them as saved (the dashboard's job form and
 * `ackcrawl jobs` send them back on an edit); a `read` caller sees each proxy as scheme, host and
 * port, as logs and page records show it. Request headers (`headers`) may carry an API key or an
 * `Authorization`: a `read` caller sees their names and hosts, each value `(hidden)`.
 */
export function settingsShownTo(caller: TokenRow | null, settings: unknown): unknown {
  if (caller !== null && scopeAllows(caller.scopes, 'operate')) return settings;
  if (typeof settings !== 'object' || settings === null) return settings;
  const { proxies, headers } = settings as { proxies?: unknown; headers?: unknown };
  const shown: Record<string, unknown> = { ...settings };
  if (Array.isArray(proxies) && proxies.length > 0) {
    shown.proxies = proxies.map((proxy: unknown) =>
      typeof proxy === 'string' ? redactProxyUrl(proxy) : proxy,
    );
  }
  if (Array.isArray(headers) && headers.length > 0) {
    shown.headers = redactRequestHeaders(headers as RequestHeader[]);
  }
  return shown;
}
