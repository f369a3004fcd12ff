import { hostRuleLookup, type HostRule } from '../../shared/politeness/host-rules.js';
import type { PolitenessSettings } from '../politeness/politeness-settings.js';
import type { RobotsPolicy } from '../robots/robots-guard.js';

/** A run's politeness and the hosts it can reach (its scope's host patterns; null: any host). */
export interface RunPoliteness {
  politeness: PolitenessSettings;
  hosts: readonly string[] | null;
}

/**
 * Politeness is per host across all runs (one HostGate): when runs disagree about a host, the
 * strictest applies — the lowest concurrency, the longest delay, adaptive delay if any run asks
 * for it, the longest cool-downs. Two runs hitting one host share its one limit.
 *
 * A run limited to some hosts (scope `host` or `domain`) has a say only on those: its defaults
 * become host rules for its scope's patterns, so a run with `hostConcurrency: 1` on one site does
 * not slow another run's other sites. The defaults for every other host are the strictest of the
 * runs that may go anywhere; when every run is limited, of all of them (a host none of them names
 * still gets the strictest settings).
 *
 * Host rules are merged pattern by pattern: for every pattern any run names, each run's value for
 * it is that run's own rule for a host the pattern matches (its most specific one, as the gate
 * would pick it; a wildcard pattern is looked up as one of its subdomains), or the run's default
 * when the run may go there; the merged rule takes the strictest of them. Null when no run is given.
 */
export function strictestPoliteness(runs: readonly RunPoliteness[]): PolitenessSettings | null {
  const [first, ...rest] = runs;
  if (first === undefined) return null;
  if (rest.length === 0) return first.politeness;
  const settings = runs.map(({ politeness, hosts }) =>
    hosts === null ? politeness : scoped(politeness, hosts),
  );
  const lookups = runs.map(({ politeness, hosts }, i) => ({
    run: politeness,
    goesAnywhere: hosts === null,
    ruleOf: hostRuleLookup((settings[i] as PolitenessSettings).hostRules),
  }));
  const patterns = [...new Set(settings.flatMap((run) => run.hostRules.map((rule) => rule.host)))];
  const hostRules: HostRule[] = patterns.map((pattern) => {
    const key = representativeHost(pattern);
    let concurrency = Infinity;
    let delayMs = 0;
    let adaptive = false;
    for (const { run, goesAnywhere, ruleOf } of lookups) {
      const rule = ruleOf(key);
      if (rule === undefined && !goesAnywhere) continue;
      concurrency = Math.min(concurrency, rule?.concurrency ?? run.concurrency);
      delayMs = Math.max(delayMs, rule?.delayMs ?? run.delayMs);
      adaptive ||= rule?.adaptive ?? run.adaptiveDelay;
    }
    return { host: pattern, concurrency, delayMs, adaptive };
  });
  const anywhere = runs.filter((run) => run.hosts === null).map((run) => run.politeness);
  const defaults = anywhere.length > 0 ? anywhere : runs.map((run) => run.politeness);
  const all = runs.map((run) => run.politeness);
  return {
    concurrency: Math.min(...defaults.map((r) => r.concurrency)),
    delayMs: Math.max(...defaults.map((r) => r.delayMs)),
    hostRules,
    adaptiveDelay: defaults.some((r) => r.adaptiveDelay),
    adaptiveFactor: Math.max(...all.map((r) => r.adaptiveFactor)),
    maxAdaptiveDelayMs: Math.max(...all.map((r) => r.maxAdaptiveDelayMs)),
    // A robots.txt Crawl-delay is cut to this cap: the strictest run honours more of it.
    maxCrawlDelayMs: Math.max(...all.map((r) => r.maxCrawlDelayMs)),
    cooldownBaseMs: Math.max(...all.map((r) => r.cooldownBaseMs)),
    maxCooldownMs: Math.max(...all.map((r) => r.maxCooldownMs)),
  };
}

/**
 * A limited run's settings with its defaults as host rules for its scope's patterns (its own rule
 * for a pattern, if it has one, stays: a more specific own rule wins at lookup anyway).
 */
function scoped(run: PolitenessSettings, hosts: readonly string[]): PolitenessSettings {
  const own = new Set(run.hostRules.map((rule) => rule.host));
  const defaults = hosts
    .filter((host) => !own.has(host))
    .map((host) => ({
      host,
      concurrency: run.concurrency,
      delayMs: run.delayMs,
      adaptive: run.adaptiveDelay,
    }));
  return { ...run, hostRules: [...run.hostRules, ...defaults] };
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
