import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import { fetchSettingsOf } from '../../shared/crawl-settings/index.js';
import { EMPTY_FRONTIER_STATS, type FrontierStats } from '../../shared/ports/frontier.js';
import type { RunCounters } from '../../shared/ports/sql-store.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import type { NewTask } from '../../shared/protocol/task.js';
import { taskLevel, type RunPriority } from '../../shared/protocol/task-priority.js';
import { crawlScopeOf } from '../../shared/url/crawl-scope.js';
import { createQueryStripper, type QueryStripper } from '../../shared/url/query-params.js';
import { scopeHostPatterns } from '../../shared/url/scope.js';
import { renderPredicate, type RenderPredicate } from '../dispatch/render-rule.js';
import { createLinkFilter } from '../outcomes/link-filter.js';
import { politenessOf, type PolitenessSettings } from '../politeness/politeness-settings.js';
import { ProgressMeter } from '../progress.js';
import type { RetryPolicyOptions } from '../retry/retry-policy.js';
import { robotsPolicy } from '../robots/robots-settings.js';
import { CookieSession } from './cookie-session.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';
import { RecentHosts } from './recent-hosts.js';
import type { RobotsPolicy } from '../robots/robots-guard.js';
import type { HostedRunState, RunReport, RunSpec } from './run-host.js';
import { runPriorityOf } from './run-priority.js';

/**
 * One run as this scheduler hosts it: its settings and what follows from them (scope, link filter,
 * render rules, priority, retry policy, politeness, the fetch settings its crawlers get), its
 * control state, its latest frontier counters and its rate. Built again in part by `update`.
 */
export class HostedRun {
  readonly runId: string;
  readonly jobId: string;
  state: HostedRunState = 'active';
  /** Frontier counters of the run, as of the last tick (see `recordStats`). */
  stats: FrontierStats = EMPTY_FRONTIER_STATS;
  /**
   * Whether `stats` were asked for after the run's seeds were in the frontier. A read that began
   * while its seeds were still being pushed may show an empty run that is not: finish detection
   * waits for a read that began after the start.
   */
  statsAfterStart = false;
  /** Pages of the run a recrawl found not modified (the recrawl index's durable count), as of the last tick. */
  notModified = 0;
  /** Its seeds are in the frontier: finish detection may begin, from the next read of its counters. */
  started = false;
  readonly meter: ProgressMeter;
  /** The hosts the run had outcomes from lately (bounded), for `GET /hosts`. */
  readonly recentHosts = new RecentHosts();
  /** Bumped on every change of `fetch`, so crawlers are sent the new settings. */
  fetchVersion = 0;
  /** The hosts' cookies when the run keeps a session (`sessionCookies`), else null. */
  cookies: CookieSession | null = null;
  private current!: Derived;

  /**
   * @param savedSession the run's session as the scheduler's session store last wrote it (a
   *   restarted scheduler goes on with it), asked for when the run starts keeping one.
   */
  constructor(
    spec: RunSpec,
    private readonly clock: () => number,
    frameLimitedFetch: (fetch: FetchSettings) => FetchSettings,
    private readonly savedSession: (runId: string) => readonly WireCookie[] = () => [],
  ) {
    this.runId = spec.runId;
    this.jobId = spec.jobId;
    this.meter = new ProgressMeter(clock);
    this.limitFetch = frameLimitedFetch;
    this.update(spec.settings);
  }

  private readonly limitFetch: (fetch: FetchSettings) => FetchSettings;

  get settings(): CrawlSettings {
    return this.current.settings;
  }

  /** Counters read from the frontier; `startedWhenAsked` is `started` as it was when the read began. */
  recordStats(stats: FrontierStats, startedWhenAsked: boolean): void {
    this.stats = stats;
    this.statsAfterStart = startedWhenAsked;
  }

  /** New settings: they apply to what is dispatched, filtered or retried from now. */
  update(settings: CrawlSettings): void {
    const scope = crawlScopeOf(settings);
    const inScope = scope.inScope;
    const priority = runPriorityOf(settings);
    const fetch = this.limitFetch(fetchSettingsOf(settings));
    if (this.current === undefined || JSON.stringify(fetch) !== JSON.stringify(this.current.fetch)) {
      this.fetchVersion += 1;
    }
    // Turned on, a session starts with what was saved of it (nothing, for a new run); turned off,
    // it is forgotten.
    if (!settings.sessionCookies) this.cookies = null;
    else if (this.cookies === null) {
      this.cookies = new CookieSession(this.clock);
      this.cookies.restore(this.savedSession(this.runId));
    }
    this.current = {
      settings,
      inScope,
      scopeProblem: scope.problem,
      stripUrl: createQueryStripper(settings.stripQueryParams),
      priority,
      fetch,
      linkFilter: createLinkFilter({
        inScope,
        maxDepth: settings.maxDepth,
        priority: (task) => taskLevel(priority, task.depth),
      }),
      needsRender: renderPredicate(settings),
      politeness: politenessOf(settings),
      scopeHosts: scopeHostPatterns(settings.scope, settings.seeds),
      robots: robotsPolicy(settings),
    };
  }

  get inScope(): (url: string) => boolean {
    return this.current.inScope;
  }
  /**
   * A page's links as the run queues them: without the query parameters it strips
   * (`stripQueryParams`), once each. The same array when the run strips nothing.
   */
  stripLinks(links: readonly string[]): readonly string[] {
    const strip = this.current.stripUrl;
    return strip === null ? links : [...new Set(links.map(strip))];
  }
  /** One URL without the query parameters the run strips; null when it strips none. */
  get stripUrl(): QueryStripper | null {
    return this.current.stripUrl;
  }
  /** Why the run does not follow a URL (its scope, then its URL patterns); null when it does. */
  get scopeProblem(): (url: string) => string | null {
    return this.current.scopeProblem;
  }
  get linkFilter(): Derived['linkFilter'] {
    return this.current.linkFilter;
  }
  get needsRender(): RenderPredicate | null {
    return this.current.needsRender;
  }
  get politeness(): PolitenessSettings {
    return this.current.politeness;
  }
  /** The host patterns the run's scope reaches, or null for any host (see strictestPoliteness). */
  get scopeHosts(): readonly string[] | null {
    return this.current.scopeHosts;
  }
  get robots(): RobotsPolicy {
    return this.current.robots;
  }
  /** What crawlers get for this run's tasks. */
  get fetch(): FetchSettings {
    return this.current.fetch;
  }
  get retry(): RetryPolicyOptions {
    return { retryDelayMs: this.settings.retryDelayMs, maxAttempts: this.settings.maxAttempts };
  }
  /** The frontier's per-run limit (0: none). */
  get maxTotal(): number {
    return this.settings.maxPages;
  }

  /** The priority level of a task of this run at `depth` (see taskLevel). */
  level(depth: number): number {
    return taskLevel(this.current.priority, depth);
  }

  /** The run's seeds as frontier tasks. */
  seedTasks(hostOf: (url: string) => string | null): NewTask[] {
    return this.settings.seeds.map((url) => ({
      runId: this.runId,
      url,
      host: hostOf(url) ?? '',
      depth: 0,
      priority: this.level(0),
      parentUrl: null,
    }));
  }

  counters(inFlight: number): RunCounters {
    const s = this.stats;
    return {
      done: s.done,
      failed: s.failed,
      notModified: this.notModified,
      queued: s.ready + s.delayed,
      inFlight,
      pagesPerSecond: this.meter.progress(s, inFlight).pagesPerSecond,
    };
  }

  report(inFlight: number): RunReport {
    return { runId: this.runId, jobId: this.jobId, state: this.state, counters: this.counters(inFlight) };
  }
}

interface Derived {
  settings: CrawlSettings;
  inScope: (url: string) => boolean;
  scopeProblem: (url: string) => string | null;
  stripUrl: QueryStripper | null;
  priority: RunPriority;
  fetch: FetchSettings;
  linkFilter: ReturnType<typeof createLinkFilter>;
  needsRender: RenderPredicate | null;
  politeness: PolitenessSettings;
  scopeHosts: readonly string[] | null;
  robots: RobotsPolicy;
}
