import type { BrowserContext } from 'playwright-core';
import type { RunHeaders } from '../fetch/request-headers.js';

/**
 * The run's own request headers (`headers`) on the browser's requests: each request the page makes
 * (its scripts, styles, frames, fetches; its document too when the browser fetches it) gets the
 * headers of its own host, as the crawler's fetches do. Routes of the page itself come first and
 * fall back to this one. A redirect Chromium follows inside one request keeps what the first hop
 * was given (the browser does not hand its later hops to a route); the document's own redirects
 * are the crawler's fetch's, where each hop gets its host's headers.
 */
export async function routeRunHeaders(context: BrowserContext, headers: RunHeaders | null): Promise<void> {
  if (headers === null) return;
  await context.route('**/*', async (route) => {
    const request = route.request();
    let own: Readonly<Record<string, string>>;
    try {
      own = headers.forUrl(new URL(request.url()));
    } catch {
      return route.fallback();
    }
    if (Object.keys(own).length === 0) return route.fallback();
    return route.fallback({ headers: { ...(await request.allHeaders()), ...own } });
  });
}
