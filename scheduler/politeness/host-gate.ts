import type { Logger } from '../../shared/logger.js';
import { hostRuleLookup, type HostRule } from '../../shared/politeness/host-rules.js';
import type { HostLookup } from '../../shared/url/host-patterns.js';
import type { HostPoliteness } from '../../shared/protocol/why.js';

export type { HostPoliteness } from '../../shared/protocol/why.js';
import { nextAdaptiveDelay } from './adaptive-delay.js';
import { cooldownMs, isSlowDownStatus } from './cooldown.js';
import { startMarginMs, type PolitenessSettings } from './politeness-settings.js';

/** What a finished request taught about its host. */
export interface RequestFeedback {
  /** HTTP status of the response, null when none arrived. */
  status: number | null;
  /** Time the crawler spent on the request, null when unknown. */
  responseMs: number | null;
  retryAfterMs: number | null;
}

interface Active {
  inFlight: number;
  lastStartAt: number;
  /** Requests sent whose crawler has not yet said they went out. */
  unreported: number;
  /** Redirects back to the host waiting for their grant; they go before any new request. */
  hopsWaiting: number;
}

/** Learned per host; kept in a bounded LRU so memory stays flat however many hosts a crawl sees. */
interface Learned {
  crawlDelayMs: number | null;
  adaptiveDelayMs: number | null;
  pausedUntil: number;
  pauseReason: string | null;
  slowDownStreak: number;
}

export interface HostGateDeps {
  logger?: Logger;
  /** Jitter source for cool-downs; Math.random unless given. */
  random?: () => number;
  /** Hosts whose learned state is kept (least recently used dropped first). */
  learnedCapacity?: number;
  /** Told of each pause: a 429/503 cool-down (`slow_down`) or a `defer` (robots.txt unreadable). */
  onCooldown?: (reason: 'slow_down' | 'deferred') => void;
}

/**
 * Per-host politeness for the whole fleet: at most `concurrency` requests in flight to a host and
 * at least `delayMs` between two request starts, per job with per-host rules. robots.txt
 * Crawl-delay raises a host's delay (capped); a 429 or 503 pauses the host (Retry-After, else
 * backoff with jitter); adaptive hosts follow their response time. The scheduler is the single
 * owner of this state, so the limits hold however many crawler processes there are.
 */
/** Handovers remembered: the shards that moved here lately (older ones go first). */
const MAX_HANDOVERS = 64;
/** A handover this old is past any delay a host asks for in practice. */
const HANDOVER_MEMORY_MS = 15 * 60_000;

/** What is left at `now` of a pause the host asked for (a 429's Retry-After, a cool-down); 0 if none. */
const pausedMs = (learned: Learned | undefined, now: number): number =>
  learned !== undefined && learned.pausedUntil > now ? learned.pausedUntil - now : 0;

export class HostGate {
  private readonly active = new Map<string, Active>();
  private readonly learned = new Map<string, Learned>();
  private ruleOf: HostLookup<HostRule>;
  private readonly random: () => number;
  private readonly capacity: number;
  /**
   * Hosts this scheduler took over from another (Frontier.onHostsTaken), and when: it does not know
   * when their last request went out, so it counts one at that moment.
   */
  private readonly handovers: { at: number; hosts: (host: string) => boolean }[] = [];
  private configured = 0;

  constructor(
    private settings: PolitenessSettings,
    private readonly deps: HostGateDeps = {},
  ) {
    this.ruleOf = hostRuleLookup(settings.hostRules);
    this.random = deps.random ?? Math.random;
    this.capacity = deps.learnedCapacity ?? 100_000;
  }

  /** Grows at each configure(): a wait computed before may be longer than the new limits ask. */
  get generation(): number {
    return this.configured;
  }

  /** New limits apply to the next request start; requests in flight stay counted. */
  configure(settings: PolitenessSettings): void {
    this.configured += 1;
    this.settings = settings;
    this.ruleOf = hostRuleLookup(settings.hostRules);
  }

  /** 0 when a request to `host` may start at `now`; otherwise ms to wait (Infinity: wait for a finish). */
  waitMs(host: string, now: number): number {
    const learned = this.learned.get(host);
    const state = this.active.get(host);
    if (state === undefined) {
      const paused = pausedMs(learned, now);
      const handedOver = this.handovers.length === 0 ? null : this.handedOverAt(host, now);
      if (handedOver === null) return paused;
      const delay = this.delayOf(host, learned);
      return Math.max(paused, handedOver + delay + startMarginMs(delay) - now);
    }
    if (state.inFlight >= this.concurrencyOf(host) || state.hopsWaiting > 0) return Infinity;
    return this.paceMs(host, state, learned, now);
  }

  /**
   * The delay's (and a pause's) part of a wait for a host with requests in flight, once a slot is
   * free. The delay runs from when the last request really went out, which the crawler reports:
   * Infinity until it has.
   */
  private paceMs(host: string, state: Active, learned: Learned | undefined, now: number): number {
    const delay = this.delayOf(host, learned);
    if (delay > 0 && state.unreported > 0) return Infinity;
    const handedOver = this.handovers.length === 0 ? null : this.handedOverAt(host, now);
    const last = Math.max(state.lastStartAt, handedOver ?? state.lastStartAt);
    return Math.max(pausedMs(learned, now), last + delay + startMarginMs(delay) - now);
  }

  /**
   * `hosts` were paced by another scheduler until `at` (a shard moved here): their next start waits
   * their delay from `at`, as if a request had gone out then.
   */
  assumeStarted(hosts: (host: string) => boolean, at: number): void {
    this.handovers.push({ at, hosts });
    if (this.handovers.length > MAX_HANDOVERS) this.handovers.shift();
  }

  /** The latest handover of `host` still within reach of a delay, or null. */
  private handedOverAt(host: string, now: number): number | null {
    // Oldest first: the expired ones go from the front, and the newest match wins.
    while (this.handovers.length > 0 && now - (this.handovers[0]?.at ?? now) >= HANDOVER_MEMORY_MS) {
      this.handovers.shift();
    }
    for (let i = this.handovers.length - 1; i >= 0; i--) {
      const h = this.handovers[i];
      if (h !== undefined && h.hosts(host)) return h.at;
    }
    return null;
  }

  /**
   * A request to `host` is sent to a crawler at `now`. True when the host has a delay: the crawler
   * must then report when the request goes out (reportStart), and the next start waits for that.
   * A crawler can hold a task a while before starting it, so the time of sending alone would let
   * two requests reach the server closer together than the delay.
   */
  start(host: string, now: number): boolean {
    const report = this.delayOf(host, this.learned.get(host)) > 0;
    const state = this.active.get(host);
    if (state === undefined)
      this.active.set(host, { inFlight: 1, lastStartAt: now, unreported: report ? 1 : 0, hopsWaiting: 0 });
    else {
      state.inFlight += 1;
      state.lastStartAt = now;
      if (report) state.unreported += 1;
    }
    return report;
  }

  /**
   * A task in flight to `host` was redirected back to it and asks to send the next request (a
   * hop). No other request to the host starts until the hop is granted (`grantHop`) or dropped.
   */
  holdForHop(host: string): void {
    const state = this.active.get(host);
    if (state !== undefined) state.hopsWaiting += 1;
  }

  /**
   * 0 when a hop to `host` may go at `now`, else ms to wait (Infinity: until a start is reported).
   * The hop holds its task's slot, so only the delay and a pause count, not the concurrency.
   */
  hopWaitMs(host: string, now: number): number {
    const learned = this.learned.get(host);
    const state = this.active.get(host);
    return state === undefined ? pausedMs(learned, now) : this.paceMs(host, state, learned, now);
  }

  /** The hop goes at `now`: a start whose crawler reports it when written, as a task's. */
  grantHop(host: string, now: number): void {
    const state = this.active.get(host);
    if (state === undefined) return;
    state.hopsWaiting = Math.max(0, state.hopsWaiting - 1);
    state.lastStartAt = now;
    state.unreported += 1;
  }

  /** The hop's task ended before the hop was granted. */
  dropHop(host: string): void {
    const state = this.active.get(host);
    if (state !== undefined) state.hopsWaiting = Math.max(0, state.hopsWaiting - 1);
  }

  /** The crawler says a request to `host` went out at about `now`. */
  reportStart(host: string, now: number): void {
    const state = this.active.get(host);
    if (state === undefined || state.unreported === 0) return;
    state.unreported -= 1;
    state.lastStartAt = Math.max(state.lastStartAt, now);
  }

  /**
   * A request to `host` whose start was reported went out again at about `now` (its first write
   * never reached the host): the delay runs from now. Its slot was counted all along.
   */
  reportResend(host: string, now: number): void {
    const state = this.active.get(host);
    if (state !== undefined) state.lastStartAt = Math.max(state.lastStartAt, now);
  }

  /**
   * A request to `host` ended; `feedback` (when the crawler reported one) feeds cool-down and
   * adaptive delay. `startUnreported`: its start was never reported (an older crawler, or it
   * failed before sending), so the delay runs from now, to be safe.
   */
  finish(host: string, now: number, feedback?: RequestFeedback, startUnreported = false): void {
    const state = this.active.get(host);
    if (state !== undefined) {
      state.inFlight = Math.max(0, state.inFlight - 1);
      if (startUnreported && state.unreported > 0) {
        state.unreported -= 1;
        state.lastStartAt = Math.max(state.lastStartAt, now);
      }
    }
    if (feedback !== undefined) this.learn(host, now, feedback);
    // An idle host whose delay has passed holds nothing worth keeping here.
    if (state !== undefined && state.inFlight === 0) {
      const delay = this.delayOf(host, this.learned.get(host));
      if (state.lastStartAt + delay + startMarginMs(delay) <= now) this.active.delete(host);
    }
  }

  /** robots.txt asked for this delay between requests (null: none). Above the cap, the cap applies. */
  setCrawlDelay(host: string, delayMs: number | null): void {
    if (delayMs === null || !Number.isFinite(delayMs) || delayMs <= 0) {
      const learned = this.learned.get(host);
      if (learned) learned.crawlDelayMs = null;
      return;
    }
    const cap = this.settings.maxCrawlDelayMs;
    if (delayMs > cap) {
      this.deps.logger?.warn(
        { host, crawlDelayMs: delayMs, capMs: cap },
        'robots.txt Crawl-delay is above the cap; the host is slowed to the cap instead',
      );
    }
    this.touch(host).crawlDelayMs = Math.min(delayMs, cap);
  }

  /** No request to `host` starts before `untilMs` (e.g. its robots.txt could not be read). */
  defer(host: string, untilMs: number, reason = 'deferred'): void {
    const learned = this.touch(host);
    if (untilMs > learned.pausedUntil) {
      learned.pausedUntil = untilMs;
      learned.pauseReason = reason;
      this.deps.onCooldown?.('deferred');
    }
  }

  inFlight(host: string): number {
    return this.active.get(host)?.inFlight ?? 0;
  }

  /** Roughly how long the `queued` tasks of `host` will wait before the last of them may start. */
  estimateWaitMs(host: string, now: number, queued: number): number {
    const learned = this.learned.get(host);
    const first = this.waitMs(host, now);
    const delay = this.delayOf(host, learned);
    const perTask = Math.max(delay + startMarginMs(delay), 1) / this.concurrencyOf(host);
    return (Number.isFinite(first) ? first : delay) + queued * perTask;
  }

  explain(host: string, now: number): HostPoliteness {
    const learned = this.learned.get(host);
    const state = this.active.get(host);
    const delayMs = this.delayOf(host, learned);
    const paused = learned !== undefined && learned.pausedUntil > now;
    const concurrency = this.concurrencyOf(host);
    const startAt = state ? state.lastStartAt + delayMs + startMarginMs(delayMs) : now;
    return {
      host,
      inFlight: state?.inFlight ?? 0,
      concurrency,
      delayMs,
      crawlDelayMs: learned?.crawlDelayMs ?? null,
      adaptiveDelayMs: learned?.adaptiveDelayMs ?? null,
      rule: this.ruleOf(host) ?? null,
      nextStartAt: Math.max(startAt, paused ? (learned?.pausedUntil ?? now) : now),
      pausedUntil: paused ? (learned?.pausedUntil ?? null) : null,
      pauseReason: paused ? (learned?.pauseReason ?? null) : null,
    };
  }

  private learn(host: string, now: number, feedback: RequestFeedback): void {
    const { settings } = this;
    if (isSlowDownStatus(feedback.status)) {
      const learned = this.touch(host);
      learned.slowDownStreak += 1;
      const { ms, capped } = cooldownMs(
        { retryAfterMs: feedback.retryAfterMs, streak: learned.slowDownStreak },
        { baseMs: settings.cooldownBaseMs, maxMs: settings.maxCooldownMs, random: this.random },
      );
      if (capped) {
        this.deps.logger?.warn(
          { host, retryAfterMs: feedback.retryAfterMs, capMs: settings.maxCooldownMs },
          'Retry-After is above the cool-down cap; the host cools down for the cap instead',
        );
      }
      if (now + ms > learned.pausedUntil) {
        learned.pausedUntil = now + ms;
        learned.pauseReason = `HTTP ${feedback.status} cool-down #${learned.slowDownStreak}`;
        this.deps.onCooldown?.('slow_down');
      }
      this.deps.logger?.info(
        { host, status: feedback.status, cooldownMs: ms, streak: learned.slowDownStreak },
        'host asked to slow down; cooling it down',
      );
    } else if (feedback.status !== null && feedback.status < 400) {
      const learned = this.learned.get(host);
      if (learned) learned.slowDownStreak = 0;
    }
    if (feedback.responseMs !== null && this.isAdaptive(host)) {
      const learned = this.touch(host);
      const base = this.baseDelayOf(host);
      learned.adaptiveDelayMs = nextAdaptiveDelay(
        learned.adaptiveDelayMs ?? base,
        { responseMs: feedback.responseMs, ok: feedback.status !== null && feedback.status < 400 },
        { minMs: base, maxMs: Math.max(base, settings.maxAdaptiveDelayMs), factor: settings.adaptiveFactor },
      );
    }
  }

  private concurrencyOf(host: string): number {
    return this.ruleOf(host)?.concurrency ?? this.settings.concurrency;
  }

  private baseDelayOf(host: string): number {
    return this.ruleOf(host)?.delayMs ?? this.settings.delayMs;
  }

  private isAdaptive(host: string): boolean {
    return this.ruleOf(host)?.adaptive ?? this.settings.adaptiveDelay;
  }

  private delayOf(host: string, learned: Learned | undefined): number {
    const base = this.baseDelayOf(host);
    if (learned === undefined) return base;
    return Math.max(base, learned.crawlDelayMs ?? 0, learned.adaptiveDelayMs ?? 0);
  }

  /** The host's learned entry, created if needed, marked most recently used. */
  private touch(host: string): Learned {
    let learned = this.learned.get(host);
    if (learned !== undefined) {
      this.learned.delete(host);
    } else {
      learned = {
        crawlDelayMs: null,
        adaptiveDelayMs: null,
        pausedUntil: 0,
        pauseReason: null,
        slowDownStreak: 0,
      };
    }
    this.learned.set(host, learned);
    if (this.learned.size > this.capacity) {
      const oldest = this.learned.keys().next().value;
      if (oldest !== undefined) this.learned.delete(oldest);
    }
    return learned;
  }
}
