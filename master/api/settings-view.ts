import { redactProxyUrl } from '../../shared/protocol/proxy-url.js';
import type { TokenRow } from '../../shared/ports/sql-store.js';
import { scopeAllows } from './auth/scopes.js';

/**
 * A job's or run's settings as a caller sees them. Proxy URLs may carry a user name and password:
 * a caller who may change the job (`operate`) sees them as saved (the dashboard's job form and
 * `ackcrawl jobs` send them back on an edit); a `read` caller sees each proxy as scheme, host and
 * port, as logs and page records show it.
 */
export function settingsShownTo(caller: TokenRow | null, settings: unknown): unknown {
  if (caller !== null && scopeAllows(caller.scopes, 'operate')) return settings;
  if (typeof settings !== 'object' || settings === null) return settings;
  const proxies = (settings as { proxies?: unknown }).proxies;
  if (!Array.isArray(proxies) || proxies.length === 0) return settings;
  return {
    ...settings,
    proxies: proxies.map((proxy: unknown) => (typeof proxy === 'string' ? redactProxyUrl(proxy) : proxy)),
  };
}
