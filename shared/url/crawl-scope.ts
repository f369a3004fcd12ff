import { describeScope } from '../why/scope-rule.js';
import { createScope, type Scope, type ScopeMode } from './scope.js';
import { createUrlFilter } from './url-patterns.js';

/** What of a job decides which discovered URLs it follows. */
export interface ScopeSettings {
  scope: ScopeMode;
  seeds: readonly string[];
  /** Absent in the settings of jobs written before patterns existed. */
  includeUrls?: readonly string[] | undefined;
  excludeUrls?: readonly string[] | undefined;
}

/** A job's scope: its hosts or domains, then its URL patterns. */
export interface CrawlScope {
  /** True when a discovered URL is followed. */
  inScope: Scope;
  /** Why a URL is not followed, in words, for "why not yet?"; null when it is. */
  problem(url: string): string | null;
}

/**
 * The scope a job's discovered links, sitemap entries and redirect targets pass (seeds are taken
 * as given): `scope` over the seeds' hosts or domains (shared/url/scope.ts), and then the URL
 * patterns (`includeUrls`, `excludeUrls`; shared/url/url-patterns.ts). Without seeds nothing is in
 * scope.
 * @throws InvalidInputError as createScope and createUrlFilter do, for settings not validated.
 */
export function crawlScopeOf(settings: ScopeSettings): CrawlScope {
  const hosts: Scope = settings.seeds.length > 0 ? createScope(settings.scope, settings.seeds) : () => false;
  const filter = createUrlFilter(settings.includeUrls ?? [], settings.excludeUrls ?? []);
  const outside = (url: string): string | null =>
    hosts(url) ? null : describeScope(settings.scope, settings.seeds);
  if (filter === null) return { inScope: hosts, problem: outside };
  return {
    inScope: (url) => hosts(url) && filter.admits(url),
    problem: (url) => outside(url) ?? filter.problem(url),
  };
}
