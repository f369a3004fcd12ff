import { z } from 'zod';

/** Proxy schemes the crawler can speak: HTTP(S) proxies (CONNECT for https targets) and SOCKS. */
export const PROXY_PROTOCOLS = ['http:', 'https:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:'] as const;

/**
 * Why a proxy URL cannot be used, or null when it can. The message never repeats the URL: it may
 * hold a password.
 */
export function proxyUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a URL; expected scheme://[user:pass@]host:port';
  }
  if (!(PROXY_PROTOCOLS as readonly string[]).includes(url.protocol)) {
    return `unsupported proxy scheme '${url.protocol.slice(0, 20)}'; use http, https, socks4, socks4a, socks5 or socks5h`;
  }
  if (!url.hostname) return 'a proxy URL needs a host';
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    return 'the user name or password is not valid percent-encoding';
  }
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    return 'a proxy URL is scheme://[user:pass@]host:port, with no path, query or fragment';
  }
  return null;
}

/**
 * A valid proxy URL with its user name and password fully percent-encoded, so it survives lists
 * separated by spaces or commas (ACKCRAWL_PROXIES); the agents decode them again.
 */
export function normalizeProxyUrl(value: string): string {
  const url = new URL(value);
  url.username = encodeURIComponent(decodeURIComponent(url.username));
  url.password = encodeURIComponent(decodeURIComponent(url.password));
  return url.href;
}

/** One proxy URL, validated and normalised; an error names the problem, never the URL. */
export const proxyUrlSchema = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = proxyUrlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform(normalizeProxyUrl);

/**
 * The proxy as it may appear in logs and page records: scheme, host and port, without the user
 * name and password (`socks5://user:pw@10.0.0.1:1080` → `socks5://10.0.0.1:1080`).
 */
export function redactProxyUrl(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}`;
  } catch {
    return '[invalid proxy URL]';
  }
}
