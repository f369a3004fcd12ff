import { MAX_WIRE_COOKIES, type WireCookie } from '../../shared/protocol/wire-cookie.js';

export interface CookieSessionLimits {
  /** Domains whose cookies are kept; the one used longest ago goes first. */
  maxDomains: number;
  /** Cookies of one domain; its oldest goes first (RFC 6265 asks a client for at least 50). */
  maxPerDomain: number;
}

export const COOKIE_SESSION_LIMITS: CookieSessionLimits = { maxDomains: 5_000, maxPerDomain: 50 };

const keyOf = (cookie: WireCookie): string => `${cookie.path}\t${cookie.name}`;

/**
 * A run's session (`sessionCookies`): the cookies its hosts set, by the domain they belong to, so a
 * host's next pages are fetched as by a browser that came back. The crawler's jar made every check
 * when a response set a cookie (its domain against the host and the public suffixes, its path, its
 * expiry): here cookies are only kept, replaced, deleted and looked up. Held by the scheduler that
 * owns the host (with several schedulers, each host has one owner), in memory: a restarted scheduler
 * starts the session afresh, as a browser whose cookies were cleared.
 */
export class CookieSession {
  /** Insertion order is recency of use: the first domain is the one to drop. */
  private readonly byDomain = new Map<string, Map<string, WireCookie>>();

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
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return [];
    }
    if (this.byDomain.size === 0) return [];
    const now = this.clock();
    const out: WireCookie[] = [];
    for (let domain = host; ;) {
      const cookies = this.byDomain.get(domain);
      if (cookies) {
        this.touch(domain, cookies);
        for (const [key, cookie] of cookies) {
          if (cookie.expires !== null && cookie.expires <= now) cookies.delete(key);
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
      const expired = cookie.expires !== null && cookie.expires <= now;
      let kept = this.byDomain.get(domain);
      if (expired) {
        kept?.delete(keyOf(cookie));
        if (kept?.size === 0) this.byDomain.delete(domain);
        continue;
      }
      if (!kept) {
        kept = new Map();
        this.byDomain.set(domain, kept);
        if (this.byDomain.size > this.limits.maxDomains) {
          const oldest = this.byDomain.keys().next().value;
          if (oldest !== undefined) this.byDomain.delete(oldest);
        }
      } else this.touch(domain, kept);
      const key = keyOf(cookie);
      kept.delete(key);
      kept.set(key, cookie.domain === domain ? cookie : { ...cookie, domain });
      if (kept.size > this.limits.maxPerDomain) {
        const oldest = kept.keys().next().value;
        if (oldest !== undefined) kept.delete(oldest);
      }
    }
  }

  /** Domains with cookies (for tests and the run's view). */
  get domains(): number {
    return this.byDomain.size;
  }

  private touch(domain: string, cookies: Map<string, WireCookie>): void {
    this.byDomain.delete(domain);
    this.byDomain.set(domain, cookies);
  }
}
