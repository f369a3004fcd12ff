import { pagePath } from '../site/page-renderer.js';
import type { SiteProcess } from './site-process.js';

/** Pages fetched before the first runner: enough for the site's process to be compiled and warm. */
export const WARM_UP_PAGES = 5_000;

/**
 * Fetches the first pages of the site with a plain loop (16 at a time) and resets its counters,
 * so that no runner pays for the site's own warm-up: whoever ran first was about 5 % slower.
 */
export async function warmSite(site: Pick<SiteProcess, 'url' | 'resetStats'>, pages: number): Promise<void> {
  const base = new URL(site.url);
  const count = Math.min(pages, WARM_UP_PAGES);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const response = await fetch(new URL(pagePath(next++), base));
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await site.resetStats();
}
