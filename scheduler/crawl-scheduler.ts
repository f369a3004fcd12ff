import type { Logger } from '../shared/logger.js';
import {
  EMPTY_FRONTIER_STATS,
  type Frontier,
  type FrontierStats,
  type SettleResult,
} from '../shared/ports/frontier.js';
import type { PageSink } from '../shared/ports/page-sink.js';
import type { FetchSettings } from '../shared/protocol/messages.js';
import type { DecodedOutcome } from '../shared/protocol/outcome-frame.js';
import { DEFAULT_RUN_ID, type Lease } from '../shared/protocol/task.js';
import { DEFAULT_JOB_ID } from '../shared/protocol/page-record.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { HostGate } from './politeness/host-gate.js';
import { politenessOf } from './politeness/politeness-settings.js';
import { fetchSettingsOf, mergeCrawlSettings, type CrawlSettings } from '../shared/crawl-settings/index.js';
import { CrashTally } from './dispatch/crash-tally.js';
import { crashOutcomes } from './outcomes/crash-outcomes.js';
import { BYE_GRACE_MS, DEFAULT_DRAIN_TIMEOUT_MS } from '../shared/lifecycle/drain.js';
import { readRecovered, type RecoveredOutcome } from './outcomes/recovered.js';
import { SeenCache } from './outcomes/seen-cache.js';
import { Settler, type SettlerOptions } from './outcomes/settler.js';
import { STALL_SHOWN_AFTER_MS, stallOf } from './outcomes/stall-reason.js';
import type { RunStall } from '../shared/ports/sql-store.js';
import type { BatchCounts } from './outcomes/outcome-batch.js';
import type { SettlerLimits } from './outcomes/settler-limits.js';
import { startWsServer, type RunningWsServer } from './ws/server.js';
import type { TlsServerOptions } from '../shared/config/tls.js';
import type { WsSession } from './ws/session.js';
import { crawlersDrained } from './ws/drain.js';
import { ProgressMeter, type CrawlProgress, type CrawlSummary } from './progress.js';
import { createSchedulerApp } from './http/app.js';
import { createHostPolicy } from '../shared/http/request-guards.js';
import { ENDPOINT_DEFAULTS, type EndpointSettings } from './ws/endpoint-settings.js';
import { outcomeFrameLimit } from '../shared/protocol/frame-limits.js';
import { explainUrl } from '../shared/why/explain-url.js';
import type { WhyAnswer } from '../shared/protocol/why.js';
import type { RunHostsAnswer } from '../shared/protocol/run-hosts.js';
import { runHosts } from './runs/run-hosts.js';
import type { CrawlRequest, CrawlStatus } from '../shared/protocol/crawl-api.js';
import { crawlScopeOf } from '../shared/url/crawl-scope.js';
import { createQueryStripper } from '../shared/url/query-params.js';
import { hostOfNormalized } from '../shared/url/host-of-normalized.js';
import type { RenderPredicate } from './dispatch/render-rule.js';
import type { RobotsAnswer } from '../shared/protocol/messages.js';
import { RobotsCache } from './robots/robots-cache.js';
import { RobotsGuard } from './robots/robots-guard.js';
import type { RobotsRules } from './robots/robots-rules.js';
import { SitemapSeeder } from './robots/sitemap-seeder.js';
import { rootSitemapTasks } from './robots/sitemap-tasks.js';
import { ROBOTS_CACHE_DEFAULTS, robotsPolicy, type RobotsCacheSettings } from './robots/robots-settings.js';
import type { RobotsPolicy } from './robots/robots-guard.js';
import { confirmedLinks, routeOutcome, type OutcomeRouting } from './outcomes/route-outcome.js';
import { validatorsLookup } from './recrawl/validators-lookup.js';
import type { ValidatorsIndex } from './recrawl/validators-index.js';
import { SessionFlusher } from './runs/session-flusher.js';
import type { SessionStore } from './runs/session-store.js';
import { RunControl, runNotHosted } from './runs/run-control.js';
import { RunRegistry } from './runs/run-registry.js';
import { RunFetchFeed } from './runs/run-fetch-feed.js';
import { frameLimitedFetch } from './runs/frame-limited-fetch.js';
import type { RunFinished, RunHost, RunReport, RunSpec } from './runs/run-host.js';
import type { Registry } from '../shared/metrics/registry.js';
import type { SchedulerMetrics } from './metrics/scheduler-metrics.js';

export interface CrawlSchedulerSettings {
  listenHost: string;
  listenPort: number;
  /**
   * An inherited listening socket to serve on instead of binding listenHost:listenPort (the
   * embedded crawl's parent bound it: connections made before the scheduler was ready wait in
   * the kernel's backlog).
   */
  listenFd?: number;
  /** What crawlers and API clients must present (`Authorization: Bearer …`). */
  token: string;
  /** Certificate and key (shared/config/tls.ts): the endpoint and API speak HTTPS/WSS. */
  tls?: TlsServerOptions | null;
  /** Connection caps, timeouts and session limits (defaults in scheduler/ws/endpoint-settings.ts). */
  endpoint?: Partial<EndpointSettings>;
  leaseMs: number;
  heartbeatMs: number;
  bufferSize: number;
  /** Graceful stop: how long to wait for crawlers to deliver what they hold (default 15 s). */
  drainTimeoutMs?: number;
  /**
   * The crawl to run (its seeds may be empty: a cluster scheduler then waits for `POST /crawl`).
   * A cluster scheduler gets it from its configuration or job.json, embedded from its configuration.
   */
  job: CrawlSettings;
  /** What a submitted crawl's absent settings are (the scheduler's configuration); default: `job`. */
  base?: CrawlSettings;
  /** Where records go, for status reports (`file:/dir`, `kafka:topic`). */
  output: string;
  /** robots.txt cache: TTL, retry backoff, size (defaults in scheduler/robots/robots-settings.ts). */
  robots?: Partial<RobotsCacheSettings>;
  /** Bounds of the outcomes on their way to durability (defaults in scheduler/outcomes/settler.ts). */
  settler?: Partial<Pick<SettlerLimits, 'maxBacklogBytes' | 'maxBatchBytes' | 'stallLogIntervalMs'>>;
}

export interface CrawlSchedulerDeps {
  settings: CrawlSchedulerSettings;
  frontier: Frontier;
  sink: PageSink;
  logger: Logger;
  clock?: () => number;
  /** Persists job settings a cluster scheduler received, so a restart resumes the same crawl. */
  saveJob?: (job: CrawlSettings) => void;
  onProgress?: (progress: CrawlProgress) => void;
  /**
   * Called once when the run the single-crawl paths start (the configured job, `POST /crawl`,
   * the embedded `ackcrawl crawl`: DEFAULT_RUN_ID) is finished: every URL it accepted is done or
   * finally failed.
   */
  onDone?: (summary: CrawlSummary) => void;
  /** Each retry and final failure once settled, for the SQL failure log (must not block). */
  onFailure?: SettlerOptions['onFailure'];
  /**
   * The recrawl index (scheduler/recrawl): validators of each URL's last capture per job, sent
   * with its next run's tasks. Absent: every page is fetched in full. Its owner closes it.
   */
  recrawl?: ValidatorsIndex;
  /**
   * Where runs that keep a session (`sessionCookies`) write it, so a restart goes on with it.
   * Absent: sessions live in memory only. Its owner closes it.
   */
  sessions?: SessionStore;
  /**
   * The process's registry (served at `GET /metrics` with the API's token) and the scheduler's
   * series on it (scheduler/metrics). Absent: no /metrics route, nothing counted.
   */
  metrics?: { registry: Registry; series: SchedulerMetrics };
}

/**
 * The scheduler role: leases tasks from the frontier, serves them to crawlers over WebSocket under
 * per-host politeness, and turns outcomes into durable records, retries and new tasks. It hosts
 * many runs at once (RunHost): each has its settings, scope, limits and counters (scheduler/runs/);
 * the host gate, robots guard, dispatcher and settler are shared, politeness being per host
 * across all runs.
 */
export class CrawlScheduler implements RunHost {
  private readonly gate: HostGate;
  private readonly dispatcher: Dispatcher;
  private readonly settler: Settler;
  private readonly robots: RobotsGuard;
  private readonly sitemaps: SitemapSeeder;
  private readonly crashes = new CrashTally();
  /** Hand-backs under way (a crawler gone or draining), awaited by close(). */
  private readonly handBacks = new Set<Promise<unknown>>();
  private readonly registry: RunRegistry;
  private readonly feed: RunFetchFeed;
  private readonly sessions = new Map<string, WsSession>();
  private readonly control: RunControl;
  private readonly sessionFlusher: SessionFlusher | null;
  private readonly routing: OutcomeRouting;
  /** The render rule and robots policy over every run, recomputed when runs change. */
  private needsRender: RenderPredicate | null = null;
  private robotsRules: RobotsPolicy;
  /** The configured crawl: the default run's settings until `POST /crawl` changes them. */
  private job: CrawlSettings;
  /** The welcome's fetch settings (of the configured crawl): tasks of runs are sent their own. */
  private readonly fetch: FetchSettings;
  private readonly limitFetch: (fetch: FetchSettings) => FetchSettings;
  private readonly clock: () => number;
  private readonly meter: ProgressMeter;
  private recovered = new Map<string, RecoveredOutcome>();
  private server: RunningWsServer | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stats: FrontierStats = { ...EMPTY_FRONTIER_STATS };
  private lastSummary: CrawlSummary | null = null;
  private lastTickErrorAt = 0;
  /** A tick asked for now, ahead of the 250 ms interval (see onSettled). */
  private soonTick: NodeJS.Immediate | null = null;
  /** One tick at a time; one asked for meanwhile runs once after it (see `tick`). */
  private ticking = false;
  private tickAgain = false;
  private closing: Promise<void> | null = null;

  constructor(private readonly deps: CrawlSchedulerDeps) {
    const { settings, logger } = deps;
    this.clock = deps.clock ?? Date.now;
    this.job = settings.job;
    this.fetch = fetchSettingsOf(this.job);
    const frameLimit = outcomeFrameLimit(this.fetch);
    this.limitFetch = frameLimitedFetch(frameLimit, (cut) =>
      logger.warn(cut, "a run's body limit is above what this scheduler's crawler endpoint takes; cut"),
    );
    this.registry = new RunRegistry({ politeness: politenessOf(this.job), robots: robotsPolicy(this.job) });
    this.robotsRules = this.registry.robots();
    this.feed = new RunFetchFeed((runId) => this.registry.get(runId));
    const series = deps.metrics?.series;
    this.gate = new HostGate(politenessOf(this.job), {
      logger: logger.child({ module: 'politeness' }),
      ...(series ? { onCooldown: (reason: 'slow_down' | 'deferred') => series.cooldown(reason) } : {}),
    });
    // A shard that moved here: its hosts' last requests went out through another scheduler.
    deps.frontier.onHostsTaken?.((taken) => this.gate.assumeStarted(taken, this.clock()));
    this.meter = new ProgressMeter(this.clock);
    this.settler = new Settler({
      sink: deps.sink,
      frontier: deps.frontier,
      logger: logger.child({ module: 'settler' }),
      maxTotal: this.registry.maxTotal,
      seen: new SeenCache(),
      onSettled: (result, counts) => this.onSettled(result, counts),
      ...(deps.onFailure ? { onFailure: deps.onFailure } : {}),
      ...(deps.recrawl ? { captures: deps.recrawl } : {}),
      clock: this.clock,
      ...settings.settler,
      maxBacklog: settings.bufferSize * 2,
      ...(series ? { metrics: series } : {}),
    });
    const fallbackRetry = { retryDelayMs: this.job.retryDelayMs, maxAttempts: this.job.maxAttempts };
    this.dispatcher = new Dispatcher({
      frontier: deps.frontier,
      gate: this.gate,
      logger: logger.child({ module: 'dispatcher' }),
      clock: this.clock,
      leaseMs: settings.leaseMs,
      bufferSize: settings.bufferSize,
      perHostBuffer: () => this.registry.perHostBuffer(),
      intercept: (lease) => this.settleRecovered(lease) || this.robots.intercept(lease),
      // Outcomes that cannot be made durable (a sink, store or disk down or full) pile up to the
      // settler's bounds, in count and in bytes; then no new work goes out until they drain.
      canDispatch: () => this.settler.accepting,
      needsRender: () => this.needsRender,
      dispatchable: (lease) => this.registry.dispatchable(lease.runId),
      jobOf: (runId) => this.registry.jobOf(runId),
      ...(deps.recrawl ? { validatorsOf: validatorsLookup(deps.recrawl, this.registry, logger) } : {}),
      cookiesOf: (lease) => this.registry.get(lease.runId)?.cookies?.forUrl(lease.url),
      beforeSend: (session, tasks) => {
        const ws = this.sessions.get(session.id);
        if (ws) this.feed.beforeTasks(ws, tasks);
      },
      hold: {
        waitMs: (next, now) => this.robots.waitMs(next, now),
        nextTask: (sessionId, now) => this.robots.nextTask(sessionId, now),
        checksHops: (lease) => this.robots.checksHops(lease),
        allowsHop: (lease, url) => this.robots.allowsHop(lease, url),
      },
      crashes: crashOutcomes({
        tally: this.crashes,
        settle: {
          fail: (lease, record, error) => this.settler.fail(lease, record, error),
          retry: (lease, delayMs, error) => this.settler.retry(lease, delayMs, error),
        },
        retry: (lease) => this.registry.get(lease.runId)?.retry ?? fallbackRetry,
        jobOf: (runId) => this.registry.jobOf(runId),
        clock: this.clock,
        logger: logger.child({ module: 'crashes' }),
      }),
    });
    this.sessionFlusher = deps.sessions
      ? new SessionFlusher({
          store: deps.sessions,
          runs: () => this.registry.all(),
          logger: logger.child({ module: 'sessions' }),
          clock: this.clock,
        })
      : null;
    this.control = new RunControl({
      registry: this.registry,
      frontier: deps.frontier,
      dispatcher: this.dispatcher,
      runsChanged: () => this.runsChanged(),
      limitFetch: this.limitFetch,
      ...(this.sessionFlusher ? { sessions: this.sessionFlusher } : {}),
      clock: this.clock,
      logger: logger.child({ module: 'runs' }),
    });
    this.routing = {
      dispatcher: this.dispatcher,
      settler: this.settler,
      crashes: this.crashes,
      runOf: (lease) => this.registry.get(lease.runId),
      fallbackRetry,
      ...(deps.recrawl ? { recrawl: deps.recrawl } : {}),
      logger: logger.child({ module: 'outcomes' }),
      ...(series ? { metrics: series } : {}),
      clock: this.clock,
    };
    series?.watch({
      runs: () => this.reports(),
      sessions: () => this.sessions.size,
      deadLetters: () => this.stats.failed,
      politenessWaiting: () => this.dispatcher.politenessWaiting(),
      commitWaitMs: () => this.settler.commitWaitMs(),
      publishBlocked: () => deps.frontier.publishBlocked?.() ?? false,
    });
    this.robots = new RobotsGuard({
      cache: new RobotsCache({
        ...ROBOTS_CACHE_DEFAULTS,
        ...settings.robots,
        onEvict: (host) => this.robots.evicted(host),
      }),
      gate: this.gate,
      policy: () => this.robotsRules,
      clock: this.clock,
      logger: logger.child({ module: 'robots' }),
      settle: {
        fail: (lease, record, error) => this.settler.fail(lease, record, error),
        retry: (lease, delayMs, error) => this.settler.retry(lease, delayMs, error),
      },
      wake: (hosts) => this.dispatcher.holdChanged(hosts),
      onKnown: (_host, origin, rules) => this.onRobotsKnown(origin, rules),
      jobOf: (runId) => this.registry.jobOf(runId),
      ...(deps.frontier.pacesHost ? { paces: deps.frontier.pacesHost.bind(deps.frontier) } : {}),
    });
    // Hosts split among schedulers: a shard given up stays paced here while its robots.txt fetches are out.
    deps.frontier.countRequestsOut?.((hosts) => this.robots.fetchesInFlightTo(hosts));
    this.sitemaps = new SitemapSeeder({
      frontier: deps.frontier,
      logger: logger.child({ module: 'sitemaps' }),
      maxTotal: this.registry.maxTotal,
      onPushed: (accepted) => {
        if (accepted > 0) this.dispatcher.frontierChanged();
      },
    });
  }

  /** For every run with `sitemaps` on, a host's sitemaps are queued once its robots.txt is read. */
  private onRobotsKnown(origin: string, rules: RobotsRules): void {
    for (const run of this.registry.dispatching()) {
      if (run.settings.sitemaps) this.sitemaps.queue(rootSitemapTasks(run.runId, origin, rules, run.inScope));
    }
  }

  /**
   * Recovers after a crash, starts the configured crawl (the default run) if it has seeds, opens
   * the crawler endpoint. Resolves with its URL.
   */
  async start(): Promise<string> {
    const { settings, frontier, sink, logger } = this.deps;
    this.recovered = readRecovered(await sink.recover(await frontier.checkpoint()));
    if (this.recovered.size > 0) {
      logger.info({ records: this.recovered.size }, 'found durable records not yet settled; settling them');
    }
    if (this.job.seeds.length > 0) await this.startRun(defaultRunSpec(this.job));
    this.stats = await frontier.stats();
    const endpoint = { ...ENDPOINT_DEFAULTS, ...settings.endpoint };
    const hosts = createHostPolicy({ listenHost: settings.listenHost, allowedHosts: endpoint.allowedHosts });
    this.server = await startWsServer({
      host: settings.listenHost,
      port: settings.listenPort,
      ...(settings.listenFd !== undefined ? { listenFd: settings.listenFd } : {}),
      token: settings.token,
      tls: settings.tls ?? null,
      hosts,
      endpoint,
      maxPayloadBytes: outcomeFrameLimit(this.fetch),
      heartbeatMs: settings.heartbeatMs,
      fetch: () => this.fetch,
      logger: logger.child({ module: 'ws' }),
      app: createSchedulerApp({
        token: settings.token,
        hosts,
        status: () => this.status(),
        submit: (request) => this.submit(request),
        why: (url, runId) => this.why(url, runId),
        runHosts: (limit, runId) => this.hosts(limit, runId),
        runs: () => this.reports(),
        logger: logger.child({ module: 'api' }),
        ...(this.deps.metrics ? { metrics: this.deps.metrics.registry } : {}),
      }),
      handlers: {
        onReady: (session) => {
          this.sessions.set(session.id, session);
          this.dispatcher.addSession(session);
          // A crawler that joins while this scheduler stops gets no work; it may go at once.
          if (this.closing) session.drain();
        },
        onCredit: () => this.dispatcher.pump(),
        onOutcome: (session, outcome) => this.onOutcome(session, outcome),
        onStarted: (session, taskId) => this.dispatcher.started(session.id, taskId),
        onHop: (session, taskId, url) => this.dispatcher.hop(session.id, taskId, url),
        onRobots: (session, answer) => this.onRobots(session, answer),
        onWorking: (session, taskIds) => this.dispatcher.working(session.id, taskIds),
        onRelease: (session, taskIds) => {
          for (const taskId of taskIds) this.robots.release(session.id, taskId);
          this.handBack(this.dispatcher.release(session.id, taskIds), 'release');
        },
        onClose: (session) => {
          this.sessions.delete(session.id);
          this.feed.sessionGone(session.id);
          this.robots.sessionGone(session.id);
          // No goodbye: it crashed, was killed or was lost. Sockets this scheduler closes as it
          // stops are not the crawlers' fault.
          const crashed = !session.saidBye && this.closing === null;
          this.handBack(this.dispatcher.removeSession(session.id, { crashed }), 'crawler gone');
        },
      },
    });
    this.timers.push(setInterval(() => void this.tick(), 250));
    this.timers.push(setInterval(() => void this.renewLeases(), Math.floor(settings.leaseMs / 3)));
    this.sessionFlusher?.start();
    this.dispatcher.pump();
    return this.server.url;
  }

  /** Tasks going back to the frontier: failures are logged (their leases run out and they come back). */
  private handBack(promise: Promise<unknown>, what: string): void {
    const tracked = promise
      .catch((err: unknown) => {
        this.deps.logger.error(
          { err, what },
          'could not hand tasks back to the frontier; they come back when their leases run out',
        );
      })
      .finally(() => this.handBacks.delete(tracked));
    this.handBacks.add(tracked);
  }

  // ---- RunHost (scheduler/runs/run-control.ts) ---------------------------------------------------

  startRun(spec: RunSpec): Promise<void> {
    return this.control.startRun(spec);
  }
  pauseRun(runId: string): Promise<void> {
    return this.control.pauseRun(runId);
  }
  resumeRun(runId: string): Promise<void> {
    return this.control.resumeRun(runId);
  }
  cancelRun(runId: string): Promise<number> {
    return this.control.cancelRun(runId);
  }
  updateRun(runId: string, settings: CrawlSettings): Promise<void> {
    return this.control.updateRun(runId, settings);
  }
  forgetRun(runId: string): boolean {
    return this.control.forgetRun(runId);
  }
  reports(): RunReport[] {
    return this.control.reports();
  }
  stall(): RunStall | undefined {
    return stallOf(
      this.settler.stalled(STALL_SHOWN_AFTER_MS),
      this.deps.frontier.publishBlocked?.() ?? false,
    );
  }
  async requeue(runId: string, url: string): Promise<boolean | null> {
    const { frontier } = this.deps;
    if (frontier.requeue === undefined) return null;
    const queued = await frontier.requeue(runId, url);
    if (queued) this.dispatcher.frontierChanged();
    return queued;
  }
  onRunFinished(listener: (finished: RunFinished) => void): void {
    this.control.onRunFinished(listener);
  }

  /** The shared parts follow the runs: the strictest politeness and robots policy, the render rules. */
  private runsChanged(): void {
    this.gate.configure(this.registry.politeness());
    this.robotsRules = this.registry.robots();
    this.needsRender = this.registry.renderPredicate();
  }

  // ---- the single crawl ------------------------------------------------------------------------

  /**
   * A crawl submitted to a running scheduler (`POST /crawl`): its settings, over the scheduler's
   * configured ones, become the default run's (scope grows with the seeds); the run starts, or
   * takes them from its next dispatch, and the seeds are queued.
   */
  async submit(request: CrawlRequest): Promise<{ accepted: number }> {
    const { seeds, ...rest } = request;
    const run = this.registry.get(DEFAULT_RUN_ID);
    this.job = {
      ...mergeCrawlSettings(this.deps.settings.base ?? this.deps.settings.job, rest),
      seeds: [...new Set([...(run?.settings.seeds ?? this.job.seeds), ...seeds])],
    };
    this.deps.saveJob?.(this.job);
    let accepted = seeds.length;
    if (!run) {
      await this.startRun(defaultRunSpec(this.job));
    } else {
      run.update(this.job);
      this.runsChanged();
      const tasks = run.seedTasks(hostOfNormalized).filter((t) => seeds.includes(t.url));
      accepted = (await this.deps.frontier.push(tasks, { maxTotal: this.registry.maxTotal })).length;
      if (run.state === 'finished') run.state = 'active';
      run.meter.restart();
      this.dispatcher.frontierChanged();
    }
    this.lastSummary = null;
    this.meter.restart();
    this.deps.logger.info({ seeds: seeds.length, accepted }, 'crawl submitted');
    return { accepted };
  }

  /** Where a URL is in a run (the default run unless named) and what it waits for (see explainUrl). */
  why(url: string, runId?: string): Promise<WhyAnswer> {
    const run = this.registry.get(runId ?? DEFAULT_RUN_ID);
    if (runId !== undefined && !run) return Promise.reject(runNotHosted(runId));
    const job = run?.settings ?? this.job;
    const scopeProblem = run?.scopeProblem ?? crawlScopeOf(job).problem;
    return explainUrl(url, {
      clock: this.clock,
      scopeProblem,
      canonical: run ? run.stripUrl : createQueryStripper(job.stripQueryParams),
      frontier: this.deps.frontier,
      runId: runId ?? DEFAULT_RUN_ID,
      locate: (u) => this.dispatcher.locate(u, runId ?? DEFAULT_RUN_ID),
      crawlerOf: (sessionId) => this.sessions.get(sessionId)?.crawlerId ?? null,
      gate: this.gate,
      robots: (u) => this.robots.explain(u),
    });
  }

  /** A run's busiest hosts (the default run unless named) and their politeness now (see runHosts). */
  hosts(limit: number, runId?: string): RunHostsAnswer {
    const id = runId ?? DEFAULT_RUN_ID;
    const run = this.registry.get(id);
    if (!run) throw runNotHosted(id);
    const now = this.clock();
    const items = runHosts({
      held: this.dispatcher.heldByHost(id),
      recent: run.recentHosts,
      gate: this.gate,
      now,
      limit,
    });
    const note =
      items.length > 0
        ? null
        : run.state === 'active' || run.state === 'finished'
          ? 'no host of the run is busy or was active lately'
          : `the run is ${run.state} here: none of its tasks is in flight`;
    return { runId: id, at: new Date(now).toISOString(), items, note };
  }

  /**
   * Of every run together: `done` once every run not cancelled is finished; `idle` with nothing
   * accepted, or no run hosted (every run let go once its end was recorded, or cancelled).
   */
  status(): CrawlStatus {
    const progress = { ...this.progress() };
    const runs = this.registry.all().filter((run) => run.state !== 'cancelled');
    const done = runs.length > 0 && runs.every((run) => run.state === 'finished');
    const status = this.stats.total === 0 || runs.length === 0 ? 'idle' : done ? 'done' : 'crawling';
    return {
      status,
      progress,
      summary: this.lastSummary ? { ...this.lastSummary } : null,
      output: this.deps.settings.output,
    };
  }

  private onOutcome(session: WsSession, outcome: DecodedOutcome): void {
    routeOutcome(this.routing, session.id, outcome);
    this.dispatcher.pump();
  }

  private onRobots(session: WsSession, answer: RobotsAnswer): void {
    if (!this.robots.answer(session.id, answer)) {
      this.deps.logger.debug({ taskId: answer.taskId }, 'stale robots.txt answer ignored');
    }
    this.dispatcher.pump();
  }

  /** What robots.txt says of a URL now (for "why not yet?"). */
  explainRobots(url: string): ReturnType<RobotsGuard['explain']> {
    return this.robots.explain(url);
  }

  private settleRecovered(lease: Lease): boolean {
    const found = this.recovered.get(lease.url);
    // A sitemap's record keeps its entries' URLs but not their kind and lastmod: read it again.
    if (!found || lease.kind === 'sitemap') return false;
    this.recovered.delete(lease.url);
    const run = this.registry.get(lease.runId);
    if (found.outcome === 'ok')
      this.settler.ackRecovered(lease, run ? run.linkFilter(found.follow, lease) : []);
    else if (found.outcome === 'not-modified')
      this.settler.ackRecovered(
        lease,
        run ? run.linkFilter(confirmedLinks(this.routing, run.jobId, lease.url), lease) : [],
      );
    else this.settler.failRecovered(lease, found.error);
    return true;
  }

  private onSettled(result: SettleResult, counts: BatchCounts): void {
    this.meter.record(counts.acks + counts.failures);
    for (const [runId, settled] of counts.byRun) this.registry.get(runId)?.meter.record(settled);
    if (result.accepted > 0 || counts.retries > 0) this.dispatcher.frontierChanged();
    // The backlog shrank: dispatch may have been held back by it.
    else this.dispatcher.pump();
    // Nothing left out here: the run may be finished. Tick now rather than at the next interval, so
    // a crawl ends (and its summary comes) as its last page is durable, not up to 250 ms later.
    if (this.dispatcher.inFlightCount === 0 && this.dispatcher.bufferedCount === 0) this.tickSoon();
  }

  private tickSoon(): void {
    if (this.soonTick || this.closing) return;
    this.soonTick = setImmediate(() => {
      this.soonTick = null;
      void this.tick();
    });
  }

  /**
   * One tick at a time: the settles of a crawl held back by politeness ask for one at nearly every
   * outcome, and overlapping ticks would each read every run's counters. One asked for while a tick
   * runs comes once, after it (its reads then see what settled meanwhile).
   */
  private async tick(): Promise<void> {
    if (this.closing) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    try {
      await this.tickOnce();
    } finally {
      this.ticking = false;
    }
    if (this.tickAgain) {
      this.tickAgain = false;
      this.tickSoon();
    }
  }

  private async tickOnce(): Promise<void> {
    try {
      this.stats = await this.deps.frontier.stats();
      for (const run of this.registry.all()) {
        if (run.state === 'cancelled') continue;
        const started = run.started;
        run.recordStats(await this.deps.frontier.stats(run.runId), started);
      }
      const maxAgeMs = this.longestTotalTimeoutMs() + 30_000;
      await this.dispatcher.expireInFlight(maxAgeMs);
      this.robots.expire(maxAgeMs);
      await this.sitemaps.flush();
      this.dispatcher.pump();
      // Read after the awaits above: a batch settled meanwhile has reached the index too, so a
      // finished run's last counters include all its not-modified pages.
      for (const run of this.registry.all()) run.notModified = this.notModifiedOf(run.runId);
      this.deps.onProgress?.(this.progress());
      for (const finished of this.control.checkFinished()) {
        const run = this.registry.get(finished.runId);
        if (finished.runId !== DEFAULT_RUN_ID || !run) continue;
        // The single crawl's end (the runs the single-crawl paths start are that one run).
        this.lastSummary = run.meter.summary(run.stats, run.notModified);
        this.deps.onDone?.(this.lastSummary);
      }
    } catch (err) {
      // During a broker outage every tick fails the same way: say it once per 10 s, not 4 times a second.
      const now = this.clock();
      if (now - this.lastTickErrorAt >= 10_000) {
        this.lastTickErrorAt = now;
        this.deps.logger.error({ err }, 'scheduler tick failed (the frontier may be unavailable); retrying');
      }
    }
  }

  /** A hung task is given up on after the longest fetch any run allows, and a margin. */
  private longestTotalTimeoutMs(): number {
    return this.registry
      .all()
      .reduce((most, run) => Math.max(most, run.settings.totalTimeoutMs), this.job.totalTimeoutMs);
  }

  private async renewLeases(): Promise<void> {
    // Outcomes waiting for a slow sink (Kafka down, say) keep their leases too.
    const held = [...this.dispatcher.heldLeases(), ...this.settler.heldLeases()];
    if (held.length === 0) return;
    try {
      await this.deps.frontier.renew(held, this.deps.settings.leaseMs);
    } catch (err) {
      this.deps.logger.error({ err }, 'lease renewal failed');
    }
  }

  progress(): CrawlProgress {
    const notModified = this.registry.all().reduce((sum, run) => sum + run.notModified, 0);
    return this.meter.progress(this.stats, this.dispatcher.inFlightCount, notModified);
  }

  /** A run's not-modified pages as the recrawl index counted them (0 without one, or unreadable). */
  private notModifiedOf(runId: string): number {
    try {
      return this.deps.recrawl?.notModified(runId) ?? 0;
    } catch {
      return 0;
    }
  }

  /**
   * Graceful stop, safe to call twice: dispatch nothing more and ask every crawler to drain; wait
   * (up to `drainTimeoutMs`) while they deliver the outcomes of what they run and hand back what
   * they had not started; let those outcomes become durable; then close the connections and hand
   * back whatever is still buffered or in flight. A restart then re-fetches only what was not done
   * by the deadline.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const [tick, ...rest] = this.timers;
      clearInterval(tick);
      if (this.soonTick) clearImmediate(this.soonTick);
      this.dispatcher.stopDispatching();
      this.robots.close();
      for (const session of this.server?.sessions ?? []) session.drain();
      await crawlersDrained({
        holding: () => this.dispatcher.inFlightCount + this.robots.fetchesInFlight,
        connected: () => this.server?.sessions.size ?? 0,
        // Crawlers hand back what still runs at their own deadline (the same setting), then say bye.
        timeoutMs: (this.deps.settings.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS) + BYE_GRACE_MS,
        logger: this.deps.logger,
      });
      await this.server?.close();
      await Promise.all([...this.handBacks]);
      await this.settler.close();
      // Leases are renewed until their outcomes are durable.
      for (const timer of rest) clearInterval(timer);
      await this.dispatcher.close();
      // What the last outcomes set is written with the rest of the sessions.
      this.sessionFlusher?.close();
    })());
  }
}

/** The run the single-crawl paths start: the configured job, `POST /crawl`, `ackcrawl crawl`. */
function defaultRunSpec(settings: CrawlSettings): RunSpec {
  return { runId: DEFAULT_RUN_ID, jobId: DEFAULT_JOB_ID, settings };
}
