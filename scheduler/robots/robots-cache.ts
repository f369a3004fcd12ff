import type { RobotsRules } from './robots-rules.js';

/**
 * One host's robots.txt state:
 * - `unknown`: needed, a fetch is queued;
 * - `fetching`: a crawler is fetching it;
 * - `known`: rules in force until `expiresAt` (the TTL), then fetched again;
 * - `deferred`: the last fetch failed (5xx, 429, network): tried again at `until`, with backoff.
 */
export type RobotsEntry =
  | { state: 'unknown'; origin: string; failures: number; lastError: string | null }
  | { state: 'fetching'; origin: string; failures: number; lastError: string | null; since: number }
  | { state: 'known'; origin: string; rules: RobotsRules; expiresAt: number }
  | { state: 'deferred'; origin: string; failures: number; lastError: string; until: number };

export interface RobotsCacheOptions {
  /** How long fetched rules stay in force. */
  ttlMs: number;
  /** Wait after the first failed fetch; doubled after each further failure. */
  retryMs: number;
  /** Longest wait between two fetches of a failing robots.txt. */
  retryMaxMs: number;
  /** Hosts remembered at most (least recently used go first). */
  maxHosts: number;
  /** Rough bytes of rules remembered at most. */
  maxBytes: number;
  /** Told when a host's rules are forgotten to make room (its Crawl-delay goes with them). */
  onEvict?: (host: string) => void;
}

/**
 * The scheduler's robots.txt state per host, as a small state machine in an LRU: known and deferred
 * hosts are forgotten least recently used first when over `maxHosts` or `maxBytes`; hosts being
 * fetched or queued for a fetch are never forgotten (there are only as many as hosts with buffered
 * tasks). Pure: the caller passes `now`.
 */
export class RobotsCache {
  private readonly entries = new Map<string, RobotsEntry>();
  /** Hosts whose fetch is queued, oldest first. */
  private readonly queued = new Set<string>();
  private bytes = 0;

  constructor(private readonly options: RobotsCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry without touching its recency (for explanations). */
  peek(host: string): RobotsEntry | undefined {
    return this.entries.get(host);
  }

  /** The entry, marked as most recently used. */
  touch(host: string): RobotsEntry | undefined {
    const entry = this.entries.get(host);
    if (entry) {
      this.entries.delete(host);
      this.entries.set(host, entry);
    }
    return entry;
  }

  /**
   * Queue a fetch of `host`'s robots.txt (first sight, rules expired, or a deferral over). Keeps the
   * failure count of a deferred host so its backoff goes on growing.
   */
  want(host: string, origin: string): void {
    const previous = this.entries.get(host);
    if (previous?.state === 'unknown' || previous?.state === 'fetching') return;
    const failures = previous?.state === 'deferred' ? previous.failures : 0;
    const lastError = previous?.state === 'deferred' ? previous.lastError : null;
    this.put(host, { state: 'unknown', origin: previous?.origin ?? origin, failures, lastError });
    this.queued.add(host);
  }

  /** Hosts whose fetch is queued, oldest first. */
  queuedHosts(): IterableIterator<string> {
    return this.queued.values();
  }

  /** A queued fetch is no longer wanted here: forgotten, as if the host had never been seen. */
  unwant(host: string): void {
    const entry = this.entries.get(host);
    this.queued.delete(host);
    if (entry?.state !== 'unknown') return;
    this.entries.delete(host);
    this.bytes -= weight(entry);
  }

  /** A queued host's fetch went out. */
  fetching(host: string, now: number): RobotsEntry | undefined {
    const entry = this.entries.get(host);
    this.queued.delete(host);
    if (entry?.state !== 'unknown') return undefined;
    const next: RobotsEntry = { ...entry, state: 'fetching', since: now };
    this.entries.set(host, next);
    return next;
  }

  /** The fetch was lost with its crawler: queue it again, no failure counted. */
  lost(host: string): void {
    const entry = this.entries.get(host);
    if (entry?.state !== 'fetching') return;
    this.entries.set(host, {
      state: 'unknown',
      origin: entry.origin,
      failures: entry.failures,
      lastError: entry.lastError,
    });
    this.queued.add(host);
  }

  /** Rules arrived (or robots.txt is missing: allow-all rules). */
  known(host: string, origin: string, rules: RobotsRules, now: number): void {
    this.queued.delete(host);
    this.put(host, { state: 'known', origin, rules, expiresAt: now + this.options.ttlMs });
  }

  /** The fetch failed in a way that may heal: try again after a backoff that doubles each time. */
  failed(host: string, origin: string, error: string, now: number): RobotsEntry {
    const previous = this.entries.get(host);
    const failures = (previous && 'failures' in previous ? previous.failures : 0) + 1;
    const wait = Math.min(this.options.retryMs * 2 ** Math.min(failures - 1, 30), this.options.retryMaxMs);
    const entry: RobotsEntry = { state: 'deferred', origin, failures, lastError: error, until: now + wait };
    this.queued.delete(host);
    this.put(host, entry);
    return entry;
  }

  private put(host: string, entry: RobotsEntry): void {
    const previous = this.entries.get(host);
    if (previous) {
      this.bytes -= weight(previous);
      this.entries.delete(host);
    }
    this.entries.set(host, entry);
    this.bytes += weight(entry);
    this.evict(host);
  }

  private evict(keep: string): void {
    if (this.entries.size <= this.options.maxHosts && this.bytes <= this.options.maxBytes) return;
    for (const [host, entry] of this.entries) {
      if (this.entries.size <= this.options.maxHosts && this.bytes <= this.options.maxBytes) return;
      if (host === keep || entry.state === 'unknown' || entry.state === 'fetching') continue;
      this.entries.delete(host);
      this.bytes -= weight(entry);
      this.options.onEvict?.(host);
    }
  }
}

function weight(entry: RobotsEntry): number {
  return entry.state === 'known' ? entry.rules.bytes : 128;
}
