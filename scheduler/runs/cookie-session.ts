import { MAX_WIRE_COOKIES, type WireCookie } from '../../shared/protocol/wire-cookie.js';

export interface CookieSessionLimits {
  /** Domains whose cookies are kept; the one used longest ago goes first. */
  maxDomains: number;
  /** Cookies of one domain; its oldest goes first (RFC 6265 asks a client for at least 50). */
  maxPerDomain: number;
  /**
   * Characters of names, values, domains and paths held in all: sites of a hostile crawl could
   * each set 50 cookies of 8 KB. Over it, the domains used longest ago go.
   */
  maxChars: number;
}

export const COOKIE_SESSION_LIMITS: CookieSessionLimits = {
  maxDomains: 5_000,
  maxPerDomain: 50,
  maxChars: 4 * 1024 * 1024,
};

const keyOf = (cookie: WireCookie): string => `${cookie.path}\t${cookie.name}`;
const charsOf = (cookie: WireCookie): number =>
  cookie.name.length + cookie.value.length + cookie.domain.length + cookie.path.length;

/**
 * A run's session (`sessionCookies`): the cookies its hosts set, by the domain they belong to, so a
 * host's next pages are fetched as by a browser that came back. The crawler's jar made every check
 * when a response set a cookie (its domain against the host and the public suffixes, its path, its
 * expiry): here cookies are only kept, replaced, deleted and looked up. Held by the scheduler that
 * owns the host (with several schedulers, each host has one owner), in memory, and written to the
 * scheduler's session store by the domains that changed (`takeChanges`), so a restarted scheduler
 * goes on with it (`restore`).
 */
export class CookieSession {
  /** Insertion order is recency of use: the first domain is the one to drop. */
  private readonly byDomain = new Map<string, Map<string, WireCookie>>();
  private chars = 0;
  /** Domains whose cookies changed since `takeChanges` last took them. */
  private readonly dirty = new Set<string>();

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly limits: CookieSessionLimits = COOKIE_SESSION_LIMITS,
  ) {}

  /**
   * The cookies a fetch of `url` starts with: those of its host and of the domains above it (not
   * host-only ones of those), not expired, at most MAX_WIRE_COOKIES. Path and `Secure` are left to
   * the crawler's jar, which applies them at each request of the fetch, redirects included.
   */
  forUrl(url: string): WireCookie[] {
    if (this.byDomain.size === 0) return [];
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return [];
    }
    const now = this.clock();
    const out: WireCookie[] = [];
    for (let domain = host; ;) {
      const cookies = this.byDomain.get(domain);
      if (cookies) {
        this.touch(domain, cookies);
        for (const [key, cookie] of cookies) {
          if (cookie.expires !== null && cookie.expires <= now) this.remove(domain, cookies, key);
          else if (!cookie.hostOnly || domain === host) out.push(cookie);
          if (out.length >= MAX_WIRE_COOKIES) return out;
        }
      }
      const dot = domain.indexOf('.');
      if (dot < 0 || host.startsWith('[')) return out;
      domain = domain.slice(dot + 1);
    }
  }

  /** What a fetch's jar held at its end: each cookie kept or replaced, or deleted when expired. */
  merge(cookies: readonly WireCookie[]): void {
    const now = this.clock();
    for (const cookie of cookies) {
      const domain = cookie.domain.toLowerCase();
      const key = keyOf(cookie);
      let kept = this.byDomain.get(domain);
      this.remove(domain, kept, key);
      if (cookie.expires !== null && cookie.expires <= now) continue;
      if (!kept || kept.size === 0) {
        kept = new Map();
        this.byDomain.set(domain, kept);
      } else this.touch(domain, kept);
      const stored = cookie.domain === domain ? cookie : { ...cookie, domain };
      kept.set(key, stored);
      this.chars += charsOf(stored);
      this.dirty.add(domain);
      if (kept.size > this.limits.maxPerDomain) this.remove(domain, kept, kept.keys().next().value);
      // The domains used longest ago go first; the one just set is the last to.
      while (
        (this.byDomain.size > this.limits.maxDomains || this.chars > this.limits.maxChars) &&
        this.byDomain.size > 0
      ) {
        const [oldest, its] = this.byDomain.entries().next().value as [string, Map<string, WireCookie>];
        for (const held of [...its.keys()]) this.remove(oldest, its, held);
        this.byDomain.delete(oldest);
      }
    }
  }

  /** Cookies written before (a restarted scheduler's session): kept as they were, not changes. */
  restore(cookies: readonly WireCookie[]): void {
    this.merge(cookies);
    this.dirty.clear();
  }

  /**
   * What changed since the last call, by domain: its cookies now, or null when it holds none (the
   * store deletes it). The changes are the caller's from then on: `retake` gives them back when
   * they could not be written.
   */
  takeChanges(): Map<string, WireCookie[] | null> {
    const changes = new Map<string, WireCookie[] | null>();
    for (const domain of this.dirty) {
      const kept = this.byDomain.get(domain);
      changes.set(domain, kept ? [...kept.values()] : null);
    }
    this.dirty.clear();
    return changes;
  }

  /** Changes that were not written: they are written with the next ones. */
  retake(domains: Iterable<string>): void {
    for (const domain of domains) this.dirty.add(domain);
  }

  /** Domains with cookies (for tests and the run's view). */
  get domains(): number {
    return this.byDomain.size;
  }

  /** Characters held (see CookieSessionLimits.maxChars). */
  get size(): number {
    return this.chars;
  }

  /** Deletes one cookie (if held), and its domain once it holds none. */
  private remove(domain: string, kept: Map<string, WireCookie> | undefined, key: string | undefined): void {
    if (kept === undefined || key === undefined) return;
    const held = kept.get(key);
    if (held === undefined) return;
    kept.delete(key);
    this.chars -= charsOf(held);
    this.dirty.add(domain);
    if (kept.size === 0) this.byDomain.delete(domain);
  }

  private touch(domain: string, cookies: Map<string, WireCookie>): void {
    this.byDomain.delete(domain);
    this.byDomain.set(domain, cookies);
  }
}
