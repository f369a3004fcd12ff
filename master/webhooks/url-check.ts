import { isIP } from 'node:net';
import { blockedReason } from '../../shared/net/address-guard.js';

/**
 * Why a webhook URL is refused when it is saved, or null. Only http(s), no credentials in it, and
 * (unless private addresses are allowed) no private or loopback IP literal and no `localhost`.
 * A name that resolves to a private address is refused when it is connected to, by the same
 * guard the crawler uses (shared/net/address-guard.ts).
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'only http and https URLs';
  if (parsed.username !== '' || parsed.password !== '')
    return 'no credentials in the URL (the signature authenticates)';
  if (allowPrivate) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    return 'localhost is private (ACKCRAWL_WEBHOOK_ALLOW_PRIVATE allows it)';
  if (isIP(host) !== 0) {
    const reason = blockedReason(host);
    if (reason) return `${host} is ${reason} (ACKCRAWL_WEBHOOK_ALLOW_PRIVATE allows it)`;
  }
  return null;
}
