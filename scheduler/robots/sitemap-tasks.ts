import type { SitemapEntry } from '../../shared/protocol/messages.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { hostOfNormalized } from '../../shared/url/host-of-normalized.js';
import { taskLevel, TOP_LEVEL } from '../../shared/protocol/task-priority.js';
import { CRAWL_PRIORITY } from '../crawl-run.js';
import { tryNormalizeUrl } from '../../shared/url/normalize.js';
import type { RobotsRules } from './robots-rules.js';

/** Sitemaps go on the top level: what they list is what the site wants crawled. */
const SITEMAP_PRIORITY = TOP_LEVEL;

/**
 * The sitemaps of a host whose robots.txt was just read: its `Sitemap:` lines and `/sitemap.xml`,
 * in scope, as sitemap tasks of nesting depth 0.
 */
export function rootSitemapTasks(
  runId: string,
  origin: string,
  rules: RobotsRules,
  inScope: (url: string) => boolean,
): NewTask[] {
  const robotsUrl = `${origin}/robots.txt`;
  const found = [
    ...rules.sitemaps().map((url) => ({ url: tryNormalizeUrl(url.trim(), robotsUrl), parentUrl: robotsUrl })),
    { url: tryNormalizeUrl(`${origin}/sitemap.xml`), parentUrl: null },
  ];
  const tasks: NewTask[] = [];
  const seen = new Set<string>();
  for (const { url, parentUrl } of found) {
    if (url === null || seen.has(url) || !inScope(url)) continue;
    const host = hostOfNormalized(url);
    if (host === null) continue;
    seen.add(url);
    tasks.push({
      runId,
      url,
      host,
      depth: 0,
      priority: SITEMAP_PRIORITY,
      parentUrl,
      kind: 'sitemap',
      lastmod: null,
    });
  }
  return tasks;
}

/**
 * A sitemap's entries as tasks: pages count as seeds (depth 0: the site listed them) and keep their
 * lastmod; nested sitemaps go one level deeper, up to `maxDepth` levels below the root sitemaps.
 * Out-of-scope entries are dropped, as links are.
 */
export function sitemapEntryTasks(
  entries: readonly SitemapEntry[],
  sitemap: Pick<Lease, 'runId' | 'url' | 'depth'>,
  options: {
    inScope: (url: string) => boolean;
    maxDepth: number;
    /** The level of a listed page (a seed of its run, depth 0); default: the single crawl's. */
    pageLevel?: number;
  },
): NewTask[] {
  const tasks: NewTask[] = [];
  for (const entry of entries) {
    if (entry.kind === 'sitemap' && sitemap.depth + 1 > options.maxDepth) continue;
    if (!options.inScope(entry.url)) continue;
    const host = hostOfNormalized(entry.url);
    if (host === null) continue;
    tasks.push(
      entry.kind === 'sitemap'
        ? {
            runId: sitemap.runId,
            url: entry.url,
            host,
            depth: sitemap.depth + 1,
            priority: SITEMAP_PRIORITY,
            parentUrl: sitemap.url,
            kind: 'sitemap',
            lastmod: entry.lastmod,
          }
        : {
            runId: sitemap.runId,
            url: entry.url,
            host,
            depth: 0,
            priority: options.pageLevel ?? taskLevel(CRAWL_PRIORITY, 0),
            parentUrl: sitemap.url,
            kind: 'page',
            lastmod: entry.lastmod,
          },
    );
  }
  return tasks;
}
