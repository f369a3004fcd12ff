import { createHash } from 'node:crypto';
import { redactProxyUrl } from '../../../shared/protocol/proxy-url.js';

/**
 * How a request through a proxy ended, as far as the proxy is concerned:
 * - `ok`: the proxy carried it (any HTTP response, 404 and 500 included: those are the target's);
 * - `proxy-failure`: the proxy itself failed before the request reached the target (refused,
 *   unreachable, connect timeout, SOCKS handshake or authentication failed, 407);
 * - `unclear`: something broke after the proxy connected (reset, read timeout): it may be the
 *   target's fault, so it neither counts against the proxy nor clears its failures.
 */
export type ProxyOutcome = 'ok' | 'proxy-failure' | 'unclear';

export interface ProxyPoolOptions {
  /** Proxy URLs, credentials included (kept in memory only; everything reported is redacted). */
  proxies: readonly string[];
  /** Consecutive proxy failures that retire a proxy. */
  maxFailures: number;
  /** Rest before the first re-admission probe; doubles with each retirement in a row. */
  cooloffMs: number;
  /** Cap on that doubling (default 16 × cooloffMs). */
  maxCooloffMs?: number;
  /** A proxy whose health score falls below this is retired too (default 0.25). */
  minScore?: number;
  clock?: () => number;
  onEvent?: (event: ProxyPoolEvent) => void;
}

export type ProxyPoolEvent =
  | { type: 'retired'; proxy: string; untilMs: number; score: number; consecutiveFailures: number }
  | { type: 'probing'; proxy: string }
  | { type: 'readmitted'; proxy: string };

/** What the pool reports about a proxy (monitoring, tests). `proxy` is redacted. */
export interface ProxyStatus {
  proxy: string;
  state: 'healthy' | 'retired' | 'probation';
  /** Health score in [0, 1]: an exponentially decaying success ratio of proxy-level outcomes. */
  score: number;
  consecutiveFailures: number;
  retirements: number;
  retiredUntil: number | null;
}

/** A proxy picked for a request. `url` has the credentials, `label` does not. */
export interface ProxyPick {
  url: string;
  label: string;
}

interface Entry {
  url: string;
  label: string;
  score: number;
  consecutiveFailures: number;
  /** Retirements in a row without a success in between: sets the cool-off. */
  streak: number;
  retiredUntil: number | null;
  /** Re-admitted after its cool-off; one outcome decides whether it stays. */
  probation: boolean;
  /** A probe request is in flight: other requests skip this proxy until it ends. */
  probing: boolean;
}

/** Weight of each score sample: after n failures from 1.0 the score is 0.8ⁿ. */
const SCORE_ALPHA = 0.2;

/** Rendezvous weight: the same (host, proxy) pair weighs the same in every crawler process. */
function weight(host: string, url: string): number {
  return createHash('sha1').update(url).update('\n').update(host).digest().readUIntBE(0, 6);
}

/** `urls` in `host`'s rendezvous order: its sticky proxy first, then where it moves if that leaves. */
export function rankProxies(host: string, urls: readonly string[]): string[] {
  return urls
    .map((url) => ({ url, weight: weight(host, url) }))
    .sort((a, b) => b.weight - a.weight || (a.url < b.url ? -1 : 1))
    .map(({ url }) => url);
}

/**
 * The crawler's proxy pool. A host keeps its proxy while that proxy is healthy: the proxy is chosen
 * by rendezvous hashing of the host over the healthy proxies, which every crawler process computes
 * alike, and which moves only the hosts of a proxy that leaves (to the proxy next in their own
 * order) and moves them back when it returns.
 *
 * A proxy is retired after `maxFailures` proxy-level failures in a row (or when its health score
 * falls below `minScore`), rests `cooloffMs` (doubling while it keeps failing), then is re-admitted
 * on probation: exactly one request probes it, and its outcome decides between healthy and another
 * rest. Target-level failures never count against a proxy. The health score is reported but does
 * not weigh the choice: a score-weighted choice would move hosts on every sample and lose stickiness.
 */
export class ProxyPool {
  private readonly entries: Entry[];
  private readonly byUrl = new Map<string, Entry>();
  private readonly clock: () => number;
  private readonly maxCooloffMs: number;
  private readonly minScore: number;

  constructor(private readonly options: ProxyPoolOptions) {
    this.clock = options.clock ?? Date.now;
    this.maxCooloffMs = options.maxCooloffMs ?? options.cooloffMs * 16;
    this.minScore = options.minScore ?? 0.25;
    this.entries = [...new Set(options.proxies)].map((url) => ({
      url,
      label: redactProxyUrl(url),
      score: 1,
      consecutiveFailures: 0,
      streak: 0,
      retiredUntil: null,
      probation: false,
      probing: false,
    }));
    for (const entry of this.entries) this.byUrl.set(entry.url, entry);
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * Proxies for `host`, best first: the host's sticky proxy, then the ones its requests move to if
   * that fails. Retired proxies, proxies in `exclude` and a probation proxy whose probe is already
   * in flight are left out. Empty when no proxy can be used.
   */
  candidates(host: string, exclude: ReadonlySet<string> = new Set()): ProxyPick[] {
    const now = this.clock();
    const usable: string[] = [];
    for (const entry of this.entries) {
      if (entry.retiredUntil !== null) {
        if (now < entry.retiredUntil) continue;
        entry.retiredUntil = null;
        entry.probation = true;
        this.options.onEvent?.({ type: 'probing', proxy: entry.label });
      }
      if (exclude.has(entry.url) || (entry.probation && entry.probing)) continue;
      usable.push(entry.url);
    }
    return rankProxies(host, usable).map((url) => ({ url, label: redactProxyUrl(url) }));
  }

  /**
   * Claims a proxy for one request (a probation proxy is claimed by one request at a time). Call
   * `report` with the outcome of every request `claim` returned true for.
   */
  claim(url: string): boolean {
    const entry = this.byUrl.get(url);
    if (!entry || entry.retiredUntil !== null) return false;
    if (entry.probation) {
      if (entry.probing) return false;
      entry.probing = true;
    }
    return true;
  }

  report(url: string, outcome: ProxyOutcome): void {
    const entry = this.byUrl.get(url);
    if (!entry) return;
    entry.probing = false;
    if (outcome === 'unclear') return;
    const sample = outcome === 'ok' ? 1 : 0;
    entry.score += SCORE_ALPHA * (sample - entry.score);
    if (outcome === 'ok') {
      entry.consecutiveFailures = 0;
      entry.streak = 0;
      if (entry.probation) {
        entry.probation = false;
        this.options.onEvent?.({ type: 'readmitted', proxy: entry.label });
      }
      return;
    }
    if (entry.retiredUntil !== null) return;
    entry.consecutiveFailures += 1;
    if (
      entry.probation ||
      entry.consecutiveFailures >= this.options.maxFailures ||
      entry.score < this.minScore
    ) {
      this.retire(entry);
    }
  }

  private retire(entry: Entry): void {
    const rest = Math.min(this.options.cooloffMs * 2 ** entry.streak, this.maxCooloffMs);
    entry.streak += 1;
    entry.retiredUntil = this.clock() + rest;
    entry.probation = false;
    entry.probing = false;
    this.options.onEvent?.({
      type: 'retired',
      proxy: entry.label,
      untilMs: entry.retiredUntil,
      score: entry.score,
      consecutiveFailures: entry.consecutiveFailures,
    });
    // A re-admitted proxy starts its count afresh; its score keeps the memory.
    entry.consecutiveFailures = 0;
  }

  /** Milliseconds until the next retired proxy may be probed; null when none is retired. */
  nextProbeInMs(): number | null {
    const now = this.clock();
    let next: number | null = null;
    for (const entry of this.entries) {
      if (entry.retiredUntil !== null) next = Math.min(next ?? Infinity, entry.retiredUntil - now);
    }
    return next === null ? null : Math.max(0, next);
  }

  snapshot(): ProxyStatus[] {
    return this.entries.map((entry) => ({
      proxy: entry.label,
      state: entry.retiredUntil !== null ? 'retired' : entry.probation ? 'probation' : 'healthy',
      score: entry.score,
      consecutiveFailures: entry.consecutiveFailures,
      retirements: entry.streak,
      retiredUntil: entry.retiredUntil,
    }));
  }
}
