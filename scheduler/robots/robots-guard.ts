import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { RobotsAnswer, WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { hostOfNormalized } from '../../shared/url/host-of-normalized.js';
import type { HostGate } from '../politeness/host-gate.js';
import { decideRetry } from '../retry/retry-policy.js';
import { isRetriablePageError } from '../../shared/error-codes/index.js';
import type { RobotsCache, RobotsEntry } from './robots-cache.js';
import { unfetchedRecord } from '../outcomes/unfetched-record.js';
import { RobotsRules } from './robots-rules.js';
import { DEFAULT_JOB_ID } from '../../shared/protocol/page-record.js';

/** The crawl's robots settings, read at each use (a submitted crawl can change them). */
export interface RobotsPolicy {
  respectRobots: boolean;
  /** Hosts are still looked at (their sitemaps queued) when robots.txt is not respected. */
  sitemaps: boolean;
  userAgent: string;
  /** Failed robots.txt fetches in a row after which the host's pages take failed attempts. */
  maxAttempts: number;
  retryDelayMs: number;
}

/** Why a URL may or may not be fetched yet, for "why not yet?" answers. */
export interface RobotsExplanation {
  state: 'allowed' | 'disallowed' | 'unknown' | 'fetching' | 'deferred';
  line?: number;
  rule?: string;
  until?: number;
  failures?: number;
  lastError?: string;
}

export interface RobotsGuardOptions {
  cache: RobotsCache;
  gate: HostGate;
  policy: () => RobotsPolicy;
  clock: () => number;
  logger: Logger;
  /** Settle a lease without fetching it, as the settler does for crawlers' outcomes. */
  settle: {
    fail(lease: Lease, record: SinkRecord, error: string): void;
    retry(lease: Lease, delayMs: number, error: string): void;
  };
  /**
   * Something can be sent now: run the dispatcher (called asynchronously). `hosts`: those whose
   * robots.txt fetch ended or was lost since the last call, so their politeness changed (a slot
   * freed, a Crawl-delay learned).
   */
  wake: (hosts: readonly string[]) => void;
  /** A host's robots.txt was read or found missing (sitemaps may be queued now). */
  onKnown?: (host: string, origin: string, rules: RobotsRules) => void;
  /** The job of a run, for the records of URLs settled here (absent: the default job). */
  jobOf?: (runId: string) => string;
  /**
   * Whether this scheduler paces `host` now (Frontier.pacesHost; absent: every host). A queued fetch
   * of a host it no longer paces is dropped, not sent: another scheduler paces that host.
   */
  paces?: (host: string) => boolean;
}

interface RobotsFetch {
  host: string;
  origin: string;
  sessionId: string;
  sentAt: number;
}

/**
 * robots.txt for the dispatcher, fleet-wide: the scheduler owns each host's rules, so robots.txt is
 * fetched once per host whatever the number of crawlers. A host's tasks wait while its rules are
 * unknown or being fetched; the fetch itself is a `robots` task sent to a crawler (its user agent,
 * proxies, address filter and limits), counted against the host's politeness. Disallowed URLs are
 * settled at dispatch time with a ROBOTS_DENIED record and never fetched.
 */
export class RobotsGuard {
  private readonly inFlight = new Map<string, RobotsFetch>();
  /** The run whose fetch settings a host's robots.txt fetch uses: the last one whose task wanted it. */
  private readonly wantedBy = new Map<string, string>();
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeQueued = false;
  private readonly changedHosts = new Set<string>();

  constructor(private readonly options: RobotsGuardOptions) {}

  private active(policy: RobotsPolicy): boolean {
    return policy.respectRobots || policy.sitemaps;
  }

  /**
   * 0 when the next task of `lease.host` may go out as far as robots.txt is concerned; otherwise ms
   * to wait (Infinity: until the rules arrive). Queues a fetch of rules unknown or expired.
   */
  waitMs(lease: Pick<Lease, 'url' | 'host' | 'runId'>, now: number): number {
    const policy = this.options.policy();
    if (!this.active(policy)) return 0;
    const { cache } = this.options;
    // A look only: recency is marked when a lease actually goes out (intercept), which is cheaper
    // than on every look of the dispatcher's scan.
    const entry = cache.peek(lease.host);
    if (!policy.respectRobots) {
      // Only sitemaps want the host: no robots.txt, no waiting.
      if (!entry)
        this.learned(lease.host, originOf(lease.url), RobotsRules.allowAll(originOf(lease.url), ''));
      return 0;
    }
    switch (entry?.state) {
      case undefined:
        return this.want(lease.host, originOf(lease.url), lease.runId);
      case 'unknown':
      case 'fetching':
        return Infinity;
      case 'known':
        return entry.expiresAt > now ? 0 : this.want(lease.host, entry.origin, lease.runId);
      case 'deferred':
        if (entry.until <= now) return this.want(lease.host, entry.origin, lease.runId);
        // Failed too often: the host's pages take failed attempts (see intercept) instead of waiting.
        return entry.failures >= policy.maxAttempts ? 0 : entry.until - now;
    }
  }

  private want(host: string, origin: string, runId: string | undefined): number {
    this.options.cache.want(host, origin);
    // Fetched with the settings (user agent, proxies, address filter) of a run that wants the host.
    if (runId !== undefined) this.wantedBy.set(host, runId);
    this.requestWake();
    return Infinity;
  }

  /** A robots.txt fetch due now whose host's politeness allows it, for this session; or null. */
  nextTask(sessionId: string, now: number): WireTask | null {
    const { cache, gate } = this.options;
    let soonest = Infinity;
    for (const host of cache.queuedHosts()) {
      if (this.options.paces?.(host) === false) {
        // Its hosts moved to another scheduler: a task of it that still comes here wants it again.
        cache.unwant(host);
        this.wantedBy.delete(host);
        continue;
      }
      const wait = gate.waitMs(host, now);
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        continue;
      }
      const entry = cache.fetching(host, now);
      if (entry?.state !== 'fetching') continue;
      gate.start(host, now);
      const taskId = `robots-${randomUUID()}`;
      this.inFlight.set(taskId, { host, origin: entry.origin, sessionId, sentAt: now });
      const runId = this.wantedBy.get(host);
      this.wantedBy.delete(host);
      return {
        ...(runId !== undefined ? { runId } : {}),
        taskId,
        url: `${entry.origin}/robots.txt`,
        depth: 0,
        attempt: entry.failures + 1,
        parentUrl: null,
        kind: 'robots',
      };
    }
    if (Number.isFinite(soonest)) this.wakeIn(soonest);
    return null;
  }

  /**
   * Called for each lease about to be sent: true when it was settled here instead — disallowed
   * (ROBOTS_DENIED, final) or its host's robots.txt keeps failing (ROBOTS_UNAVAILABLE, through the
   * retry tiers).
   */
  intercept(lease: Lease): boolean {
    const policy = this.options.policy();
    if (!policy.respectRobots) return false;
    const entry = this.options.cache.touch(lease.host);
    const now = this.options.clock();
    if (entry?.state === 'known') {
      const verdict = entry.rules.check(lease.url);
      if (verdict.allowed) return false;
      const message = `${verdict.rule || 'Disallow'} (robots.txt line ${verdict.line ?? '?'})`;
      const record = unfetchedRecord(lease, { code: 'ROBOTS_DENIED', message }, now, this.captureOf(lease));
      this.options.settle.fail(lease, record, `ROBOTS_DENIED: ${message}`);
      return true;
    }
    if (entry?.state === 'deferred' && entry.failures >= policy.maxAttempts) {
      const message = `robots.txt of ${lease.host} could not be fetched (${entry.failures} tries; last: ${entry.lastError})`;
      const decision = decideRetry(
        { code: 'ROBOTS_UNAVAILABLE', reportedRetriable: true, attempt: lease.attempt, retryAfterMs: null },
        { retryDelayMs: policy.retryDelayMs, maxAttempts: policy.maxAttempts },
      );
      const reason = `ROBOTS_UNAVAILABLE: ${message}`;
      if (decision.kind === 'retry') this.options.settle.retry(lease, decision.delayMs, reason);
      else
        this.options.settle.fail(
          lease,
          unfetchedRecord(lease, { code: 'ROBOTS_UNAVAILABLE', message }, now, this.captureOf(lease)),
          reason,
        );
      return true;
    }
    return false;
  }

  /**
   * Whether a page's redirects back to its host are checked against the host's rules (its task
   * asks before each: `hopGrants`). Sitemaps are fetched whatever robots.txt says of them, and a
   * host whose known rules disallow nothing (most: no robots.txt, or no Disallow line) has nothing
   * to check: asking would cost each hop a round trip to the scheduler, and the crawler a fifth of
   * its speed on a site that redirects every page (`npm run bench -- --redirects`).
   */
  checksHops(lease: Pick<Lease, 'kind' | 'host'>): boolean {
    if (!this.options.policy().respectRobots || lease.kind === 'sitemap') return false;
    const entry = this.options.cache.peek(lease.host);
    return entry?.state !== 'known' || !entry.rules.disallowsNothing();
  }

  /**
   * Whether a redirect of the lease's page to `url`, on its host, may be followed: false only when
   * the host's known rules disallow it. The task was sent once the rules were known, so they are
   * known here but for a rare expiry in between, when the hop goes (as the task did). A sitemap's
   * redirects are not checked, as sitemaps are not.
   */
  allowsHop(lease: Pick<Lease, 'host' | 'kind'>, url: string): boolean {
    if (!this.checksHops(lease)) return true;
    const entry = this.options.cache.peek(lease.host);
    return entry?.state !== 'known' || entry.rules.check(url).allowed;
  }

  private captureOf(lease: Pick<Lease, 'runId'>): { jobId: string } {
    return { jobId: this.options.jobOf?.(lease.runId) ?? DEFAULT_JOB_ID };
  }

  /** A crawler's answer to a robots task. False when it is stale or not this session's. */
  answer(sessionId: string, answer: RobotsAnswer): boolean {
    const fetch = this.inFlight.get(answer.taskId);
    if (!fetch || fetch.sessionId !== sessionId) return false;
    this.inFlight.delete(answer.taskId);
    const now = this.options.clock();
    // A robots task never reports its start: the host's delay runs from its end.
    this.options.gate.finish(fetch.host, now, undefined, true);
    const { host, origin } = fetch;
    const status = answer.failure ? null : answer.status;
    if (status !== null && status >= 200 && status < 300) {
      this.learned(host, origin, RobotsRules.parse(origin, answer.body, this.options.policy().userAgent));
    } else if (
      (answer.failure && isRetriablePageError(answer.failure.code, answer.failure.retriable)) ||
      status === 429 ||
      (status !== null && status >= 500)
    ) {
      const error = answer.failure ? `${answer.failure.code}: ${answer.failure.message}` : `HTTP_${status}`;
      const entry = this.options.cache.failed(host, origin, error, now);
      this.options.logger.warn(
        { host, error, failures: 'failures' in entry ? entry.failures : 0, retryInMs: waitOf(entry, now) },
        'robots.txt could not be fetched; the host waits and robots.txt is tried again later',
      );
    } else {
      // 4xx (RFC 9309: "unavailable"), or a failure that will not heal (blocked address, redirect
      // loop): no rules, everything allowed. A page of a host that cannot be fetched fails by itself.
      this.learned(host, origin, RobotsRules.allowAll(origin, ''));
    }
    this.requestWake(host);
    return true;
  }

  private learned(host: string, origin: string, rules: RobotsRules): void {
    const { cache, gate } = this.options;
    cache.known(host, origin, rules, this.options.clock());
    // The gate raises the host's delay to it, cut to the job's cap with a warning.
    gate.setCrawlDelay(host, this.options.policy().respectRobots ? rules.crawlDelayMs() : null);
    this.options.onKnown?.(host, origin, rules);
  }

  /** A crawler went away: its robots fetches are queued again. */
  sessionGone(sessionId: string): void {
    for (const [taskId, fetch] of this.inFlight) if (fetch.sessionId === sessionId) this.lose(taskId, fetch);
  }

  /** The crawler handed a robots task back unfinished (it drains): queued again. False: not its. */
  release(sessionId: string, taskId: string): boolean {
    const fetch = this.inFlight.get(taskId);
    if (!fetch || fetch.sessionId !== sessionId) return false;
    this.lose(taskId, fetch);
    return true;
  }

  /** robots fetches in flight longer than `maxAgeMs` (a hung crawler) are queued again. */
  expire(maxAgeMs: number): void {
    const now = this.options.clock();
    for (const [taskId, fetch] of this.inFlight) if (now - fetch.sentAt >= maxAgeMs) this.lose(taskId, fetch);
  }

  private lose(taskId: string, fetch: RobotsFetch): void {
    this.inFlight.delete(taskId);
    this.options.gate.finish(fetch.host, this.options.clock(), undefined, true);
    this.options.cache.lost(fetch.host);
    this.requestWake(fetch.host);
  }

  get fetchesInFlight(): number {
    return this.inFlight.size;
  }

  /** robots.txt fetches out to hosts `hosts` accepts (Frontier.countRequestsOut). */
  fetchesInFlightTo(hosts: (host: string) => boolean): number {
    let n = 0;
    for (const fetch of this.inFlight.values()) if (hosts(fetch.host)) n += 1;
    return n;
  }

  /** What robots.txt says of `url` now, without fetching anything. */
  explain(url: string): RobotsExplanation {
    if (!this.options.policy().respectRobots) return { state: 'allowed' };
    const host = hostOfNormalized(url) ?? '';
    const entry = this.options.cache.peek(host);
    switch (entry?.state) {
      case undefined:
        return { state: 'unknown' };
      case 'unknown':
        return {
          state: 'unknown',
          failures: entry.failures,
          ...(entry.lastError ? { lastError: entry.lastError } : {}),
        };
      case 'fetching':
        return { state: 'fetching', failures: entry.failures };
      case 'deferred':
        return {
          state: 'deferred',
          until: entry.until,
          failures: entry.failures,
          lastError: entry.lastError,
        };
      case 'known': {
        const verdict = entry.rules.check(url);
        return {
          state: verdict.allowed ? 'allowed' : 'disallowed',
          ...(verdict.line !== undefined ? { line: verdict.line, rule: verdict.rule ?? '' } : {}),
        };
      }
    }
  }

  /** Forget a host's Crawl-delay with its rules (the cache made room). */
  evicted(host: string): void {
    this.options.gate.setCrawlDelay(host, null);
  }

  private requestWake(host?: string): void {
    if (host !== undefined) this.changedHosts.add(host);
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      const hosts = [...this.changedHosts];
      this.changedHosts.clear();
      this.options.wake(hosts);
    });
  }

  private wakeIn(ms: number): void {
    if (this.wakeTimer) return;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.options.wake([]);
      },
      Math.max(1, ms),
    );
  }

  close(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
  }
}

function originOf(url: string): string {
  const start = url.indexOf('://');
  const end = url.slice(start + 3).search(/[/?#]/);
  return end < 0 ? url : url.slice(0, start + 3 + end);
}

function waitOf(entry: RobotsEntry, now: number): number {
  return entry.state === 'deferred' ? entry.until - now : 0;
}
