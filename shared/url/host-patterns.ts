import { z } from 'zod';

/**
 * Host patterns, as a job names the hosts a rule applies to (`renderHosts`):
 *
 * - `example.com` — that host, on any port;
 * - `*.example.com` — every subdomain of example.com, at any depth (not example.com itself);
 * - either form with `:port` — only that port (`127.0.0.1:8080`, `*.example.com:8443`);
 * - an IPv6 literal in brackets, `[::1]` or `[::1]:8080`.
 *
 * Matching is case-insensitive and runs on host keys (`host[:port]`, as `hostOf` gives them).
 */
const PATTERN = /^(?:(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

export const hostPatternSchema = z
  .string()
  .max(300)
  .regex(PATTERN, 'a host pattern: example.com, *.example.com, optionally with :port');

export type HostMatcher = (hostKey: string) => boolean;

function splitPort(key: string): { name: string; port: string | null } {
  const close = key.lastIndexOf(']');
  const colon = key.lastIndexOf(':');
  if (colon > close && (close >= 0 || key.indexOf(':') === colon)) {
    return { name: key.slice(0, colon), port: key.slice(colon + 1) };
  }
  return { name: key, port: null };
}

/** Looks up the value of the most specific pattern for a host key (see createHostLookup). */
export type HostLookup<T> = (hostKey: string) => T | undefined;

/**
 * One lookup for a list of (pattern, value) pairs, validated with `hostPatternSchema` beforehand.
 * The most specific pattern wins: the exact name before a wildcard, a longer wildcard suffix before
 * a shorter one, and at each of those a pattern with the host's port before one without. A pattern
 * given twice keeps its last value, as a config file read top down. A lookup costs a few map probes
 * per label of the host name, however many patterns there are.
 */
export function createHostLookup<T>(entries: readonly { pattern: string; value: T }[]): HostLookup<T> {
  const exact = new Map<string, Map<string, T>>();
  const wildcard = new Map<string, Map<string, T>>();
  for (const { pattern, value } of entries) {
    const { name, port } = splitPort(pattern.toLowerCase());
    const table = name.startsWith('*.') ? wildcard : exact;
    const key = name.startsWith('*.') ? name.slice(2) : name;
    let ports = table.get(key);
    if (!ports) table.set(key, (ports = new Map()));
    ports.set(port ?? ANY_PORT, value);
  }
  if (exact.size === 0 && wildcard.size === 0) return () => undefined;
  const pick = (ports: Map<string, T> | undefined, port: string | null): T | undefined =>
    ports === undefined ? undefined : ((port === null ? undefined : ports.get(port)) ?? ports.get(ANY_PORT));
  return (hostKey) => {
    const { name, port } = splitPort(hostKey.toLowerCase());
    const found = pick(exact.get(name), port);
    if (found !== undefined || wildcard.size === 0) return found;
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      const value = pick(wildcard.get(name.slice(dot + 1)), port);
      if (value !== undefined) return value;
    }
    return undefined;
  };
}

const ANY_PORT = '*';

/** One matcher for a list of patterns (validated with `hostPatternSchema` beforehand). */
export function createHostMatcher(patterns: readonly string[]): HostMatcher {
  const lookup = createHostLookup(patterns.map((pattern) => ({ pattern, value: true })));
  return (hostKey) => lookup(hostKey) === true;
}
