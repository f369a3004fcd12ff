import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { AppError } from '../errors.js';
import { createHostLookup } from '../url/host-patterns.js';
import type { Middleware } from 'koa';

/**
 * Which `Host` headers the scheduler answers. A DNS-rebinding attack reaches a server through a
 * name the attacker controls, so only names the operator chose are accepted: on a loopback
 * address, loopback names and IPs only; elsewhere also IP literals (no rebinding goes through one),
 * this machine's host name, and `allowedHosts` (`example.com`, `*.example.com`, optional `:port`;
 * `*` accepts any Host).
 */
export interface HostPolicy {
  check(hostHeader: string | undefined): AppError | null;
}

export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    (isIP(bare) === 4 && bare.startsWith('127.')) ||
    bare.startsWith('::ffff:127.')
  );
}

function isLoopbackName(name: string): boolean {
  return isLoopbackAddress(name) || name.endsWith('.localhost');
}

/** `host[:port]` → its lowercased name (IPv6 in brackets), or null when it is not a host. */
function hostName(header: string): string | null {
  try {
    const url = new URL(`http://${header}/`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    return url.hostname;
  } catch {
    return null;
  }
}

export function createHostPolicy(options: {
  listenHost: string;
  allowedHosts: readonly string[];
  /** Who listens, in the refusal's message (default `scheduler`). */
  service?: string;
  /** The variable that lists more host names, in the refusal's message (default ACKCRAWL_ALLOWED_HOSTS). */
  setting?: string;
}): HostPolicy {
  const service = options.service ?? 'scheduler';
  const setting = options.setting ?? 'ACKCRAWL_ALLOWED_HOSTS';
  const loopbackOnly = isLoopbackAddress(options.listenHost);
  const any = options.allowedHosts.includes('*');
  const patterns = options.allowedHosts.filter((h) => h !== '*');
  const listed = createHostLookup(patterns.map((pattern) => ({ pattern, value: true })));
  const own = hostname().toLowerCase();
  const allowed = (header: string, name: string): boolean => {
    if (isLoopbackName(name) || listed(header.toLowerCase()) === true) return true;
    if (loopbackOnly) return false;
    return any || isIP(name.replace(/^\[|\]$/g, '')) !== 0 || name === own;
  };
  return {
    check(header) {
      const name = header ? hostName(header) : null;
      if (header && name && allowed(header, name)) return null;
      return new AppError(
        'HOST_NOT_ALLOWED',
        loopbackOnly
          ? `this ${service} listens on loopback and answers loopback names only (Host: 127.0.0.1, localhost or [::1])`
          : `this Host is not one the ${service} answers; add it to ${setting}`,
      );
    },
  };
}

/**
 * A request a web page made from another origin: refused, so that no site a user visits can drive
 * the scheduler through their browser (the bearer token and the JSON content type stop it too).
 * A browser names the page's origin in `Origin`, and modern ones say `Sec-Fetch-Site`; the CLI
 * and crawlers send neither. `sameOriginOk`: a same-origin `Origin` is fine (the HTTP API); the
 * crawler endpoint refuses any browser at all.
 */
export function crossOriginProblem(
  headers: { origin?: string | undefined; host?: string | undefined; 'sec-fetch-site'?: string | undefined },
  sameOriginOk: boolean,
): AppError | null {
  const site = headers['sec-fetch-site'];
  const origin = headers.origin;
  const crossSite = site !== undefined && site !== 'same-origin' && site !== 'none';
  const host = (headers.host ?? '').toLowerCase();
  // Same origin over http or https (a listener with TLS).
  const same = origin !== undefined && [`http://${host}`, `https://${host}`].includes(origin.toLowerCase());
  const foreign = origin !== undefined && (!sameOriginOk || !same);
  if (!crossSite && !foreign) return null;
  return new AppError(
    'CROSS_ORIGIN',
    'requests from web pages are refused: call the API from the ackcrawl CLI or a server-side client',
  );
}

/**
 * Koa middleware of both guards: a Host this listener does not answer (DNS rebinding) or a request
 * made by a web page of another origin is refused before any route runs.
 */
export function requestGuards(hosts: HostPolicy): Middleware {
  return async (ctx, next) => {
    const problem =
      hosts.check(ctx.get('host') || undefined) ??
      crossOriginProblem(
        {
          origin: ctx.get('origin') || undefined,
          host: ctx.get('host') || undefined,
          'sec-fetch-site': ctx.get('sec-fetch-site') || undefined,
        },
        true,
      );
    if (problem) throw problem;
    await next();
  };
}
