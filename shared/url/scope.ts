import { getDomain } from 'tldts';
import { InvalidInputError } from '../errors.js';
import { hostKey, normalizeUrl } from './normalize.js';

/**
 * Crawl scope: which discovered URLs a job may enqueue, decided from its seed URLs.
 *
 * - `host`: the URL's host key (hostname plus non-default port, see `hostKey`) is a seed's host key.
 *   The scheme is ignored, so `http://a.example/` and `https://a.example/` are one site; a different
 *   port is a different site, as it is for browsers' same-origin rules.
 * - `domain`: the URL's registrable domain ("eTLD+1", from the Public Suffix List via tldts) is a
 *   seed's. Private suffixes count (`user.github.io` is its own domain, not all of `github.io`), since
 *   they mark sites run by different people. Ports are ignored. An IP address, `localhost` or any other
 *   host without a registrable domain is a domain of its own.
 * - `any`: every http(s) URL.
 *
 * The seeds are parsed once here; a call costs one `new URL` (plus a tldts lookup in `domain` mode,
 * only for hosts that end in a seed domain).
 */
export type ScopeMode = 'host' | 'domain' | 'any';

export const SCOPE_MODES: readonly ScopeMode[] = ['host', 'domain', 'any'];

/** Answers whether a URL is in scope; false for unparsable and non-http(s) URLs. */
export type Scope = (url: string) => boolean;

/**
 * @throws InvalidInputError `SCOPE_MODE_INVALID` for an unknown mode, `SCOPE_NO_SEEDS` when `host` or
 *   `domain` mode has no seed (nothing could ever be in scope), and the `normalizeUrl` codes for a seed
 *   that is not a valid http(s) URL.
 */
export function createScope(mode: ScopeMode, seedUrls: readonly string[]): Scope {
  if (!SCOPE_MODES.includes(mode)) {
    throw new InvalidInputError(
      'SCOPE_MODE_INVALID',
      `unknown scope mode ${JSON.stringify(mode)}: use one of ${SCOPE_MODES.join(', ')}`,
    );
  }
  const seeds = seedUrls.map((seed) => new URL(normalizeUrl(seed)));
  if (mode === 'any') return (url) => parseHttp(url) !== null;
  if (seeds.length === 0) {
    throw new InvalidInputError('SCOPE_NO_SEEDS', `scope mode '${mode}' needs at least one seed URL`);
  }
  if (mode === 'host') {
    const hosts = new Set(seeds.map(hostKey));
    return (url) => {
      const parsed = parseHttp(url);
      return parsed !== null && hosts.has(hostKey(parsed));
    };
  }
  const domains = [...new Set(seeds.map((seed) => registrableDomain(seed.hostname)))];
  return (url) => {
    const parsed = parseHttp(url);
    if (parsed === null) return false;
    const hostname = stripTrailingDot(parsed.hostname);
    // A host can only have domain D if it is D or ends in '.D': a cheap test that rules out most
    // foreign links before the Public Suffix List lookup.
    if (!domains.some((domain) => isSelfOrSubdomain(hostname, domain))) return false;
    const domain = registrableDomain(hostname);
    return domains.includes(domain);
  };
}

/**
 * The registrable domain of a hostname (`www.example.co.uk` -> `example.co.uk`), or the hostname itself
 * when it has none (IP addresses, `localhost`, a bare public suffix).
 */
export function registrableDomain(hostname: string): string {
  if (hostname.startsWith('[')) return hostname; // IPv6, which tldts would answer null for anyway.
  return getDomain(hostname, { allowPrivateDomains: true, extractHostname: false }) ?? hostname;
}

function isSelfOrSubdomain(hostname: string, domain: string): boolean {
  return (
    hostname === domain ||
    (hostname.length > domain.length &&
      hostname.endsWith(domain) &&
      hostname.charCodeAt(hostname.length - domain.length - 1) === 0x2e)
  );
}

function stripTrailingDot(hostname: string): string {
  return hostname.endsWith('.') ? hostname.replace(/\.+$/, '') : hostname;
}

function parseHttp(url: string): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : null;
}

/**
 * The hosts a scope can reach, as host patterns (shared/url/host-patterns.ts): in `host` mode the
 * seeds' host keys, in `domain` mode each seed's registrable domain and its subdomains; null in
 * `any` mode (every host). For politeness that applies only where a run can go.
 */
export function scopeHostPatterns(mode: ScopeMode, seedUrls: readonly string[]): string[] | null {
  if (mode === 'any' || seedUrls.length === 0) return null;
  const seeds = seedUrls.map((seed) => new URL(normalizeUrl(seed)));
  if (mode === 'host') return [...new Set(seeds.map((seed) => hostKey(seed).toLowerCase()))];
  const domains = new Set(seeds.map((seed) => registrableDomain(stripTrailingDot(seed.hostname))));
  return [...domains].flatMap((domain) => [domain, `*.${domain}`]);
}
