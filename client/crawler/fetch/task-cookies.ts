import type { Cookie, CookieJar } from 'tough-cookie';
import { MAX_WIRE_COOKIES, type WireCookie } from '../../../shared/protocol/wire-cookie.js';

/** A cookie as a browser context takes it (Playwright's `BrowserContext.addCookies`). */
export interface BrowserCookie {
  name: string;
  value: string;
  /** `.example.com` applies to its subdomains as well; without the dot, to that host only. */
  domain: string;
  path: string;
  /** Unix time in seconds; -1 for a session cookie. */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

const NONE = Promise.resolve('');

/**
 * tough-cookie (and its public-suffix list) loads with the first cookie a crawler is sent: a crawl
 * of sites that set none does not carry it in each crawler's heap.
 */
let toughCookie: Promise<typeof import('tough-cookie')> | null = null;
const loadToughCookie = (): Promise<typeof import('tough-cookie')> =>
  (toughCookie ??= import('tough-cookie'));
const newJar = async (): Promise<CookieJar> => new (await loadToughCookie()).CookieJar();

/**
 * The cookies of one task: what the responses of its fetch set (its redirects included) is sent on
 * its later requests, as a browser would, and handed to the browser that renders its page. Without
 * a session nothing is kept between tasks, and a cookie of one page never reaches another. A run
 * with `sessionCookies` gives the task its host's session (`initial`), and takes the jar's cookies
 * back (`toWire`) when a response set one.
 *
 * got's cookie jar interface, backed by tough-cookie (RFC 6265: domain and path matching, host-only
 * and `Secure` cookies, expiry, public suffixes refused as domains) once a response sets a cookie or
 * the task brings one; until then it costs a fetch one resolved promise. A cookie tough-cookie
 * refuses is dropped, never an error of the fetch (got's `ignoreInvalidCookies` is set as well).
 */
export class TaskCookies {
  /** Made by the first cookie set (got sets a response's cookies all at once: one jar for them). */
  private jar: Promise<CookieJar> | null = null;
  private kept = false;
  private set = false;
  /** The task belongs to a run that keeps a session: its jar goes back to the scheduler. */
  readonly session: boolean;

  /**
   * @param initial the host's session (a run with `sessionCookies`), else undefined.
   * @param fixed the run's own cookies (`cookies`): the jar starts with them, the session's of the
   *   same name, domain and path put over them; they go back to the session only once changed.
   */
  constructor(
    initial?: readonly WireCookie[],
    private readonly fixed: readonly WireCookie[] = [],
  ) {
    this.session = initial !== undefined;
    const start = fixed.length === 0 ? (initial ?? []) : [...fixed, ...(initial ?? [])];
    if (start.length === 0) return;
    this.jar = newJar().then(async (jar) => {
      const { Cookie } = await loadToughCookie();
      for (const wire of start) await jar.store.putCookie(cookieOf(Cookie, wire));
      return jar;
    });
    this.kept = true;
  }

  getCookieString(url: string): Promise<string> {
    return this.jar === null ? NONE : this.jar.then((jar) => jar.getCookieString(url));
  }

  async setCookie(rawCookie: string, url: string): Promise<unknown> {
    this.jar ??= newJar();
    const cookie = await (await this.jar).setCookie(rawCookie, url, { ignoreError: true });
    if (cookie) this.set = true;
    // An expired cookie (`Max-Age=0`: a deletion) is stored, and never sent or handed on.
    const expiry = cookie?.expiryTime();
    if (cookie && (expiry === undefined || expiry > Date.now())) this.kept = true;
    return cookie;
  }

  /** No live cookie was brought or set (one may have expired or been deleted since). */
  get empty(): boolean {
    return !this.kept;
  }

  /** A response of the fetch set a cookie the jar took (a deletion included; a refused one is not). */
  get changed(): boolean {
    return this.set;
  }

  /**
   * What the browser that rendered the page holds at its end (what the page's scripts and
   * subresources set, and what it was given): a cookie the jar lacks, or holds with another value or
   * expiry, is put in it, and counts as set. The browser applied its own rules when it took them.
   */
  async absorb(cookies: readonly BrowserCookie[]): Promise<void> {
    if (cookies.length === 0) return;
    this.jar ??= newJar();
    const jar = await this.jar;
    const { Cookie } = await loadToughCookie();
    for (const browser of cookies) {
      const wire = wireOfBrowser(browser);
      const held = await jar.store.findCookie(wire.domain, wire.path, wire.name);
      const heldExpiry = held?.expiryTime();
      const heldExpires = heldExpiry === undefined || heldExpiry === Infinity ? null : heldExpiry;
      // The browser keeps expiry in whole seconds: what it was given comes back a little earlier.
      const sameExpiry =
        heldExpires === wire.expires ||
        (heldExpires !== null &&
          wire.expires !== null &&
          Math.floor(heldExpires / 1000) === Math.floor(wire.expires / 1000));
      if (held && held.value === wire.value && sameExpiry) continue;
      await jar.store.putCookie(cookieOf(Cookie, wire));
      this.set = true;
      if (wire.expires === null || wire.expires > Date.now()) this.kept = true;
    }
  }

  /**
   * Every cookie the jar holds, expired ones included (they delete the session's copy), but the
   * run's own ones as it was given them (every task starts with those anyway).
   */
  async toWire(): Promise<WireCookie[]> {
    if (this.jar === null) return [];
    const out: WireCookie[] = [];
    for (const cookie of await (await this.jar).store.getAllCookies()) {
      if (!cookie.domain || out.length >= MAX_WIRE_COOKIES || this.isFixed(cookie)) continue;
      const expiry = cookie.expiryTime();
      const sameSite = sameSiteOf(cookie.sameSite)?.toLowerCase() as WireCookie['sameSite'];
      out.push({
        name: cookie.key,
        value: cookie.value,
        domain: cookie.domain,
        path: cookie.path ?? '/',
        expires: expiry === undefined || expiry === Infinity ? null : expiry,
        hostOnly: cookie.hostOnly === true,
        secure: cookie.secure,
        httpOnly: cookie.httpOnly,
        ...(sameSite ? { sameSite } : {}),
      });
    }
    return out;
  }

  private isFixed(cookie: Cookie): boolean {
    return this.fixed.some(
      (f) =>
        f.name === cookie.key &&
        f.value === cookie.value &&
        f.domain === cookie.domain &&
        f.path === cookie.path &&
        cookie.expiryTime() === Infinity,
    );
  }

  /** Every cookie held and not expired, as the browser context takes them. */
  async forBrowser(now: Date = new Date()): Promise<BrowserCookie[]> {
    if (this.jar === null) return [];
    const out: BrowserCookie[] = [];
    for (const cookie of await (await this.jar).store.getAllCookies()) {
      const expiry = cookie.expiryTime();
      if (expiry !== undefined && expiry !== Infinity && expiry <= now.getTime()) continue;
      if (!cookie.domain) continue;
      const sameSite = sameSiteOf(cookie.sameSite);
      out.push({
        name: cookie.key,
        value: cookie.value,
        domain: cookie.hostOnly === true ? cookie.domain : `.${cookie.domain}`,
        path: cookie.path ?? '/',
        expires: expiry === undefined || expiry === Infinity ? -1 : Math.floor(expiry / 1000),
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        ...(sameSite ? { sameSite } : {}),
      });
    }
    return out;
  }
}

function sameSiteOf(value: unknown): BrowserCookie['sameSite'] | undefined {
  switch (typeof value === 'string' ? value.toLowerCase() : '') {
    case 'strict':
      return 'Strict';
    case 'lax':
      return 'Lax';
    case 'none':
      return 'None';
    default:
      return undefined;
  }
}

/** A session's cookie as tough-cookie holds it: its checks were made when a response set it. */
function cookieOf(Cookie: typeof import('tough-cookie').Cookie, wire: WireCookie): Cookie {
  return new Cookie({
    key: wire.name,
    value: wire.value,
    domain: wire.domain,
    path: wire.path,
    expires: wire.expires === null ? 'Infinity' : new Date(wire.expires),
    hostOnly: wire.hostOnly,
    secure: wire.secure,
    httpOnly: wire.httpOnly,
    ...(wire.sameSite ? { sameSite: wire.sameSite } : {}),
  });
}

/** A browser's cookie (Playwright's form) as the session keeps it. */
function wireOfBrowser(cookie: BrowserCookie): WireCookie {
  const hostOnly = !cookie.domain.startsWith('.');
  const sameSite = cookie.sameSite?.toLowerCase() as WireCookie['sameSite'];
  return {
    name: cookie.name,
    value: cookie.value,
    domain: (hostOnly ? cookie.domain : cookie.domain.slice(1)).toLowerCase(),
    path: cookie.path || '/',
    expires: cookie.expires < 0 ? null : Math.round(cookie.expires * 1000),
    hostOnly,
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
    ...(sameSite ? { sameSite } : {}),
  };
}
