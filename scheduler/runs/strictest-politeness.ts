import { hostRuleLookup, type HostRule } from '../../shared/politeness/host-rules.js';
import type { PolitenessSettings } from '../politeness/politeness-settings.js';
import type { RobotsPolicy } from '../robots/robots-guard.js';

/**
 * Politeness is per host across all runs (one HostGate): when runs disagree about a host, the
 * strictest applies — the lowest concurrency, the longest delay, adaptive delay if any run asks
 * for it, the longest cool-downs. Two runs hitting one host share its one limit.
 *
 * Host rules are merged pattern by pattern: for every pattern any run names, each run's value for
 * it is that run's own rule for a host the pattern matches (its most specific one, as the gate
 * would pick it; a wildcard pattern is looked up as one of its subdomains), or the run's default;
 * the merged rule takes the strictest of them. Null when no run is given.
 */
export function strictestPoliteness(runs: readonly PolitenessSettings[]): PolitenessSettings | null {
  const [first, ...rest] = runs;
  if (first === undefined) return null;
  if (rest.length === 0) return first;
  const lookups = runs.map((run) => ({ run, ruleOf: hostRuleLookup(run.hostRules) }));
  const patterns = [...new Set(runs.flatMap((run) => run.hostRules.map((rule) => rule.host)))];
  const hostRules: HostRule[] = patterns.map((pattern) => {
    const key = representativeHost(pattern);
    let concurrency = Infinity;
    let delayMs = 0;
    let adaptive = false;
    for (const { run, ruleOf } of lookups) {
      const rule = ruleOf(key);
      concurrency = Math.min(concurrency, rule?.concurrency ?? run.concurrency);
      delayMs = Math.max(delayMs, rule?.delayMs ?? run.delayMs);
      adaptive ||= rule?.adaptive ?? run.adaptiveDelay;
    }
    return { host: pattern, concurrency, delayMs, adaptive };
  });
  return {
    concurrency: Math.min(...runs.map((r) => r.concurrency)),
    delayMs: Math.max(...runs.map((r) => r.delayMs)),
    hostRules,
    adaptiveDelay: runs.some((r) => r.adaptiveDelay),
    adaptiveFactor: Math.max(...runs.map((r) => r.adaptiveFactor)),
    maxAdaptiveDelayMs: Math.max(...runs.map((r) => r.maxAdaptiveDelayMs)),
    // A robots.txt Crawl-delay is cut to this cap: the strictest run honours more of it.
    maxCrawlDelayMs: Math.max(...runs.map((r) => r.maxCrawlDelayMs)),
    cooldownBaseMs: Math.max(...runs.map((r) => r.cooldownBaseMs)),
    maxCooldownMs: Math.max(...runs.map((r) => r.maxCooldownMs)),
  };
}

/** A host key the pattern matches: itself, or for `*.example.com` one of its subdomains. */
function representativeHost(pattern: string): string {
  return pattern.startsWith('*.') ? `_${pattern.slice(1)}` : pattern;
}

/**
 * robots.txt is read once per host for all runs (scheduler/robots/robots-guard.ts): it is obeyed
 * when any run respects it (the strictest), sitemaps are looked for when any run wants them, and a
 * host whose robots.txt keeps failing is given up on after the fewest attempts any run allows.
 * Rules are matched for the user agent of the first run (the oldest one hosted). Null when no run
 * is given.
 */
export function strictestRobotsPolicy(runs: readonly RobotsPolicy[]): RobotsPolicy | null {
  const [first] = runs;
  if (first === undefined) return null;
  return {
    respectRobots: runs.some((r) => r.respectRobots),
    sitemaps: runs.some((r) => r.sitemaps),
    userAgent: first.userAgent,
    maxAttempts: Math.min(...runs.map((r) => r.maxAttempts)),
    retryDelayMs: Math.max(...runs.map((r) => r.retryDelayMs)),
  };
}
