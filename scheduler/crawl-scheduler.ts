import type { Logger } from '../shared/logger.js';
import type { Frontier, FrontierStats, SettleResult } from '../shared/ports/frontier.js';
import type { PageSink } from '../shared/ports/page-sink.js';
import type { FetchSettings } from '../shared/protocol/messages.js';
import type { DecodedOutcome } from '../shared/protocol/outcome-frame.js';
import type { Lease, NewTask } from '../shared/protocol/task.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { HostGate } from './politeness/host-gate.js';
import { politenessOf } from './politeness/politeness-settings.js';
import { fetchSettingsOf, mergeCrawlSettings, type CrawlSettings } from '../shared/crawl-settings/index.js';
import { decideRetry } from './retry/retry-policy.js';
import { CrashTally } from './dispatch/crash-tally.js';
import { crashOutcomes } from './outcomes/crash-outcomes.js';
import { BYE_GRACE_MS, DEFAULT_DRAIN_TIMEOUT_MS } from '../shared/lifecycle/drain.js';
import { createLinkFilter } from './outcomes/link-filter.js';
import { readRecovered, type RecoveredOutcome } from './outcomes/recovered.js';
import { SeenCache } from './outcomes/seen-cache.js';
import { Settler, type SettlerOptions } from './outcomes/settler.js';
import type { SettlerLimits } from './outcomes/settler-limits.js';
import { startWsServer, type RunningWsServer } from './ws/server.js';
import type { WsSession } from './ws/session.js';
import { crawlersDrained } from './ws/drain.js';
import { ProgressMeter, type CrawlProgress, type CrawlSummary } from './progress.js';
import { createSchedulerApp } from './http/app.js';
import { createHostPolicy } from '../shared/http/request-guards.js';
import { ENDPOINT_DEFAULTS, type EndpointSettings } from './ws/endpoint-settings.js';
import { outcomeFrameLimit } from '../shared/protocol/frame-limits.js';
import { explainUrl } from '../shared/why/explain-url.js';
import { describeScope } from '../shared/why/scope-rule.js';
import type { WhyAnswer } from '../shared/protocol/why.js';
import type { CrawlRequest, CrawlStatus } from '../shared/protocol/crawl-api.js';
import { createScope } from '../shared/url/scope.js';
import { hostOfNormalized } from '../shared/url/host-of-normalized.js';
import { renderPredicate, type RenderPredicate } from './dispatch/render-rule.js';
import type { RobotsAnswer } from '../shared/protocol/messages.js';
import { RobotsCache } from './robots/robots-cache.js';
import { RobotsGuard } from './robots/robots-guard.js';
import type { RobotsRules } from './robots/robots-rules.js';
import { SitemapSeeder } from './robots/sitemap-seeder.js';
import { rootSitemapTasks, sitemapEntryTasks } from './robots/sitemap-tasks.js';
import { CRAWL_PRIORITY, CRAWL_RUN_ID } from './crawl-run.js';
import { taskLevel } from '../shared/protocol/task-priority.js';
import { ROBOTS_CACHE_DEFAULTS, robotsPolicy, type RobotsCacheSettings } from './robots/robots-settings.js';

export interface CrawlSchedulerSettings {
  listenHost: string;
  listenPort: number;
  /** What crawlers and API clients must present (`Authorization: Bearer …`). */
  token: string;
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
  /** Called once when nothing is left to fetch: every accepted URL is done or finally failed. */
  onDone?: (summary: CrawlSummary) => void;
  /** Each retry and final failure once settled, for the SQL failure log (must not block). */
  onFailure?: SettlerOptions['onFailure'];
}

/**
 * The scheduler role: leases tasks from the frontier, serves them to crawlers over WebSocket under
 * per-host politeness, and turns outcomes into durable records, retries and new tasks.
 */
export class CrawlScheduler {
  private readonly gate: HostGate;
  private readonly dispatcher: Dispatcher;
  private readonly settler: Settler;
  private readonly robots: RobotsGuard;
  private readonly sitemaps: SitemapSeeder;
  private readonly crashes = new CrashTally();
  /** Hand-backs under way (a crawler gone or draining), awaited by close(). */
  private readonly handBacks = new Set<Promise<unknown>>();
  private inScope: (url: string) => boolean = () => false;
  private linkFilter: ReturnType<typeof createLinkFilter>;
  private needsRender: RenderPredicate | null;
  private job: CrawlSettings;
  /** What crawlers get of `job` (fetchSettingsOf), kept in step with it. */
  private fetch: FetchSettings;
  private readonly clock: () => number;
  private readonly meter: ProgressMeter;
  private recovered = new Map<string, RecoveredOutcome>();
  private server: RunningWsServer | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stats: FrontierStats = {
    ready: 0,
    delayed: 0,
    leased: 0,
    done: 0,
    failed: 0,
    total: 0,
    cancelled: 0,
  };
  private finished = false;
  private lastSummary: CrawlSummary | null = null;
  private lastTickErrorAt = 0;
  private closing: Promise<void> | null = null;

  constructor(private readonly deps: CrawlSchedulerDeps) {
    const { settings, logger } = deps;
    this.clock = deps.clock ?? Date.now;
    this.job = settings.job;
    this.fetch = fetchSettingsOf(this.job);
    this.gate = new HostGate(politenessOf(this.job), { logger: logger.child({ module: 'politeness' }) });
    this.linkFilter = this.makeLinkFilter();
    this.needsRender = renderPredicate(this.job);
    this.meter = new ProgressMeter(this.clock);
    this.settler = new Settler({
      sink: deps.sink,
      frontier: deps.frontier,
      logger: logger.child({ module: 'settler' }),
      maxTotal: () => this.job.maxPages,
      seen: new SeenCache(),
      onSettled: (result, counts) => this.onSettled(result, counts),
      ...(deps.onFailure ? { onFailure: deps.onFailure } : {}),
      clock: this.clock,
      ...settings.settler,
      maxBacklog: settings.bufferSize * 2,
    });
    this.dispatcher = new Dispatcher({
      frontier: deps.frontier,
      gate: this.gate,
      logger: logger.child({ module: 'dispatcher' }),
      clock: this.clock,
      leaseMs: settings.leaseMs,
      bufferSize: settings.bufferSize,
      perHostBuffer: () => perHostBuffer(this.job),
      intercept: (lease) => this.settleRecovered(lease) || this.robots.intercept(lease),
      // Outcomes that cannot be made durable (a sink, store or disk down or full) pile up to the
      // settler's bounds, in count and in bytes; then no new work goes out until they drain.
      canDispatch: () => this.settler.accepting,
      needsRender: () => this.needsRender,
      hold: {
        waitMs: (next, now) => this.robots.waitMs(next, now),
        nextTask: (sessionId, now) => this.robots.nextTask(sessionId, now),
      },
      crashes: crashOutcomes({
        tally: this.crashes,
        settle: {
          fail: (lease, record, error) => this.settler.fail(lease, record, error),
          retry: (lease, delayMs, error) => this.settler.retry(lease, delayMs, error),
        },
        retry: () => ({ retryDelayMs: this.job.retryDelayMs, maxAttempts: this.job.maxAttempts }),
        clock: this.clock,
        logger: logger.child({ module: 'crashes' }),
      }),
    });
    this.robots = new RobotsGuard({
      cache: new RobotsCache({
        ...ROBOTS_CACHE_DEFAULTS,
        ...settings.robots,
        onEvict: (host) => this.robots.evicted(host),
      }),
      gate: this.gate,
      policy: () => robotsPolicy(this.job),
      clock: this.clock,
      logger: logger.child({ module: 'robots' }),
      settle: {
        fail: (lease, record, error) => this.settler.fail(lease, record, error),
        retry: (lease, delayMs, error) => this.settler.retry(lease, delayMs, error),
      },
      wake: () => this.dispatcher.pump(),
      onKnown: (_host, origin, rules) => this.onRobotsKnown(origin, rules),
    });
    this.sitemaps = new SitemapSeeder({
      frontier: deps.frontier,
      logger: logger.child({ module: 'sitemaps' }),
      maxTotal: () => this.job.maxPages,
      onPushed: (accepted) => {
        if (accepted > 0) this.dispatcher.frontierChanged();
      },
    });
  }

  /** With `sitemaps` on, a host's sitemaps are queued once its robots.txt is read. */
  private onRobotsKnown(origin: string, rules: RobotsRules): void {
    if (this.job.sitemaps) this.sitemaps.queue(rootSitemapTasks(CRAWL_RUN_ID, origin, rules, this.inScope));
  }

  /** Recovers after a crash, queues the seeds, opens the crawler endpoint. Resolves with its URL. */
  async start(): Promise<string> {
    const { settings, frontier, sink, logger } = this.deps;
    this.recovered = readRecovered(await sink.recover(await frontier.checkpoint()));
    if (this.recovered.size > 0) {
      logger.info({ records: this.recovered.size }, 'found durable records not yet settled; settling them');
    }
    await this.pushSeeds(this.job.seeds);
    this.stats = await frontier.stats();
    const endpoint = { ...ENDPOINT_DEFAULTS, ...settings.endpoint };
    const hosts = createHostPolicy({ listenHost: settings.listenHost, allowedHosts: endpoint.allowedHosts });
    this.server = await startWsServer({
      host: settings.listenHost,
      port: settings.listenPort,
      token: settings.token,
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
        why: (url) => this.why(url),
        logger: logger.child({ module: 'api' }),
      }),
      handlers: {
        onReady: (session) => {
          this.dispatcher.addSession(session);
          // A crawler that joins while this scheduler stops gets no work; it may go at once.
          if (this.closing) session.drain();
        },
        onCredit: () => this.dispatcher.pump(),
        onOutcome: (session, outcome) => this.onOutcome(session, outcome),
        onStarted: (session, taskId) => this.dispatcher.started(session.id, taskId),
        onRobots: (session, answer) => this.onRobots(session, answer),
        onWorking: (session, taskIds) => this.dispatcher.working(session.id, taskIds),
        onRelease: (session, taskIds) => {
          for (const taskId of taskIds) this.robots.release(session.id, taskId);
          this.handBack(this.dispatcher.release(session.id, taskIds), 'release');
        },
        onClose: (session) => {
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

  private makeLinkFilter(): ReturnType<typeof createLinkFilter> {
    const inScope = this.job.seeds.length > 0 ? createScope(this.job.scope, this.job.seeds) : () => false;
    this.inScope = inScope;
    return createLinkFilter({ inScope, maxDepth: this.job.maxDepth });
  }

  private async pushSeeds(seeds: readonly string[]): Promise<number> {
    const tasks: NewTask[] = seeds.map((url) => ({
      url,
      host: hostOfNormalized(url) ?? '',
      depth: 0,
      runId: CRAWL_RUN_ID,
      priority: taskLevel(CRAWL_PRIORITY, 0),
      parentUrl: null,
    }));
    const maxTotal = this.job.maxPages;
    const accepted = await this.deps.frontier.push(tasks, maxTotal > 0 ? { maxTotal: () => maxTotal } : {});
    this.dispatcher.frontierChanged();
    return accepted.length;
  }

  /**
   * A crawl submitted to a running scheduler: its settings, over the scheduler's configured ones,
   * replace the current ones (scope grows with the seeds); they reach every crawler, and the seeds
   * are queued.
   */
  async submit(request: CrawlRequest): Promise<{ accepted: number }> {
    const { seeds, ...rest } = request;
    this.job = {
      ...mergeCrawlSettings(this.deps.settings.base ?? this.deps.settings.job, rest),
      seeds: [...new Set([...this.job.seeds, ...seeds])],
    };
    this.fetch = fetchSettingsOf(this.job);
    this.deps.saveJob?.(this.job);
    this.gate.configure(politenessOf(this.job));
    this.linkFilter = this.makeLinkFilter();
    this.needsRender = renderPredicate(this.job);
    for (const session of this.server?.sessions ?? []) session.send({ type: 'settings', fetch: this.fetch });
    const accepted = await this.pushSeeds(seeds);
    this.finished = false;
    this.lastSummary = null;
    this.meter.restart();
    this.deps.logger.info({ seeds: seeds.length, accepted }, 'crawl submitted');
    return { accepted };
  }

  /** Where a URL is in this crawl and what it waits for (see explainUrl). */
  why(url: string): Promise<WhyAnswer> {
    const job = this.job;
    const inScope = job.seeds.length > 0 ? createScope(job.scope, job.seeds) : () => false;
    return explainUrl(url, {
      clock: this.clock,
      scopeProblem: (u) => (inScope(u) ? null : describeScope(job.scope, job.seeds)),
      frontier: this.deps.frontier,
      locate: (u) => this.dispatcher.locate(u),
      crawlerOf: (sessionId) =>
        [...(this.server?.sessions ?? [])].find((s) => s.id === sessionId)?.crawlerId ?? null,
      gate: this.gate,
      robots: (u) => this.robots.explain(u),
    });
  }

  status(): CrawlStatus {
    const progress = { ...this.progress() };
    const status = this.stats.total === 0 ? 'idle' : this.finished ? 'done' : 'crawling';
    return {
      status,
      progress,
      summary: this.lastSummary ? { ...this.lastSummary } : null,
      output: this.deps.settings.output,
    };
  }

  private onOutcome(session: WsSession, { header, record }: DecodedOutcome): void {
    const lease = this.dispatcher.complete(session.id, header.taskId, {
      status: header.status ?? header.failure?.status ?? null,
      responseMs: header.fetchMs ?? null,
      retryAfterMs: header.failure?.retryAfterMs ?? null,
    });
    if (!lease) {
      this.deps.logger.debug({ taskId: header.taskId }, 'stale outcome ignored (task was handed back)');
      return;
    }
    const sinkRecord = { key: lease.url, value: record };
    if (header.outcome === 'ok') {
      const discovered =
        lease.kind === 'sitemap' && header.entries
          ? sitemapEntryTasks(header.entries, lease, {
              inScope: this.inScope,
              maxDepth: this.job.sitemapMaxDepth,
            })
          : this.linkFilter(header.links, lease);
      this.settler.ack(lease, sinkRecord, discovered);
      this.crashes.forget(lease.taskId);
    } else {
      const failure = header.failure ?? {
        code: 'UNKNOWN',
        message: 'failed without a reason',
        retriable: false,
        status: null,
        retryAfterMs: null,
      };
      const decision = decideRetry(
        {
          code: failure.code,
          reportedRetriable: failure.retriable,
          attempt: lease.attempt,
          retryAfterMs: failure.retryAfterMs,
        },
        { retryDelayMs: this.job.retryDelayMs, maxAttempts: this.job.maxAttempts },
      );
      const reason = `${failure.code}: ${failure.message}`;
      if (decision.kind === 'final') {
        this.settler.fail(lease, sinkRecord, reason);
        this.crashes.forget(lease.taskId);
      } else {
        this.settler.retry(lease, decision.delayMs, reason);
      }
    }
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
    if (found.outcome === 'ok') this.settler.ackRecovered(lease, this.linkFilter(found.follow, lease));
    else this.settler.failRecovered(lease, found.error);
    return true;
  }

  private onSettled(result: SettleResult, counts: { acks: number; retries: number; failures: number }): void {
    this.meter.record(counts.acks + counts.failures);
    if (result.accepted > 0 || counts.retries > 0) this.dispatcher.frontierChanged();
    // The backlog shrank: dispatch may have been held back by it.
    else this.dispatcher.pump();
  }

  private async tick(): Promise<void> {
    if (this.closing) return;
    try {
      this.stats = await this.deps.frontier.stats();
      await this.dispatcher.expireInFlight(this.job.totalTimeoutMs + 30_000);
      this.robots.expire(this.job.totalTimeoutMs + 30_000);
      await this.sitemaps.flush();
      this.dispatcher.pump();
      this.deps.onProgress?.(this.progress());
      const s = this.stats;
      const idle = s.ready + s.delayed + s.leased === 0 && this.settler.backlog === 0;
      if (idle && s.total > 0 && !this.finished) {
        this.finished = true;
        this.lastSummary = this.meter.summary(s);
        this.deps.onDone?.(this.lastSummary);
      } else if (!idle) {
        this.finished = false;
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
    return this.meter.progress(this.stats, this.dispatcher.inFlightCount);
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
    })());
  }
}

/** Tasks buffered per host: enough to keep its concurrency busy, never a whole host's backlog. */
function perHostBuffer(job: CrawlSettings): number {
  const most = job.hostRules.reduce((max, rule) => Math.max(max, rule.concurrency ?? 0), job.hostConcurrency);
  return Math.max(16, most * 4);
}
