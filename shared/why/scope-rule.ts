import type { ScopeMode } from '../url/scope.js';
import { hostKey } from '../url/normalize.js';

/** The scope rule that keeps a URL out, in words, for "why not yet?" answers. */
export function describeScope(mode: ScopeMode, seeds: readonly string[]): string {
  if (seeds.length === 0) return 'out of scope: the crawl has no seeds yet';
  if (mode === 'any') return 'out of scope: scope "any" takes only http(s) URLs';
  const hosts = [...new Set(seeds.map((s) => hostKey(new URL(s))))];
  const shown = hosts.slice(0, 5).join(', ') + (hosts.length > 5 ? `, … (${hosts.length} in all)` : '');
  return mode === 'host'
    ? `out of scope: scope "host" follows only the seeds' hosts (${shown})`
    : `out of scope: scope "domain" follows only the seeds' registrable domains (seed hosts: ${shown})`;
}
