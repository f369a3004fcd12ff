import { hostKey, tryNormalizeUrl } from '../../../shared/url/normalize.js';

/** The statuses got follows a Location of (its own list, less 304, which is not a redirect). */
const REDIRECT_STATUSES = new Set([300, 301, 302, 303, 307, 308]);

/** What got's `followRedirect` is given: the response that carries the Location. */
interface RedirectResponse {
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The http(s) URL a Location leads to, resolved against the response's URL; null when it is not
 * one (absent, not a URL, another scheme). As got reads it: the header's bytes as UTF-8.
 */
function locationOf(location: string | string[] | undefined, base: string): URL | null {
  if (typeof location !== 'string') return null;
  try {
    const next = new URL(Buffer.from(location, 'binary').toString(), base);
    return next.protocol === 'http:' || next.protocol === 'https:' ? next : null;
  } catch {
    return null;
  }
}

/**
 * got's `followRedirect` for a page's fetch: a redirect to another host is not followed, so the
 * fetch ends with the 3xx response and the crawl queues its Location as a link (`movedTo`). That
 * target then goes through the crawl's scope, dedup, robots.txt and its own host's politeness, as
 * any link does. Same-host redirects are followed (and paced: redirect-spacing.ts); so are those got
 * refuses anyway (not a URL, another scheme), so they fail with got's own codes as before.
 */
export function staysOnHost(taskUrl: string): (response: RedirectResponse) => boolean {
  // Parsed at the first redirect: most fetches have none.
  let host: string | null = null;
  return (response) => {
    const next = locationOf(response.headers.location, response.url);
    return next === null || hostKey(next) === (host ??= hostKey(new URL(taskUrl)));
  };
}

/**
 * The normalised URL a page's fetch stopped at a redirect to, or null when the response is not a
 * redirect with an http(s) Location. A fetch ends with one only where it was not followed: another
 * host's (a page's: `staysOnHost`), or one the host's robots.txt disallows (the scheduler denied
 * the hop: redirect-spacing.ts).
 */
export function movedTo(page: {
  status: number;
  finalUrl: string;
  headers: Record<string, string | undefined>;
}): string | null {
  if (!REDIRECT_STATUSES.has(page.status)) return null;
  const next = locationOf(page.headers['location'], page.finalUrl);
  return next === null ? null : tryNormalizeUrl(next.href);
}
