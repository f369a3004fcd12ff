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

/** One matcher for a list of patterns (validated with `hostPatternSchema` beforehand). */
export function createHostMatcher(patterns: readonly string[]): HostMatcher {
  const exact = new Map<string, (string | null)[]>();
  const suffixes: { suffix: string; port: string | null }[] = [];
  for (const pattern of patterns) {
    const { name, port } = splitPort(pattern.toLowerCase());
    if (name.startsWith('*.')) suffixes.push({ suffix: name.slice(1), port });
    else exact.set(name, [...(exact.get(name) ?? []), port]);
  }
  if (exact.size === 0 && suffixes.length === 0) return () => false;
  return (hostKey) => {
    const { name, port } = splitPort(hostKey.toLowerCase());
    const ports = exact.get(name);
    if (ports?.some((p) => p === null || p === port)) return true;
    return suffixes.some((s) => name.endsWith(s.suffix) && (s.port === null || s.port === port));
  };
}
