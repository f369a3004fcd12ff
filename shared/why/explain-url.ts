import type { Frontier, TaskView } from '../ports/frontier.js';
import { hostPolitenessView, type HostPoliteness, type Located, type WhyAnswer } from '../protocol/why.js';
import { DEFAULT_RUN_ID } from '../protocol/task.js';
import { hostOfNormalized } from '../url/host-of-normalized.js';
import { normalizeUrl } from '../url/normalize.js';

/** What robots.txt says of a URL, as the robots module explains it. */
export interface RobotsView {
  state: string;
  line?: number | null;
  rule?: string | null;
  until?: number | null;
}

export interface ExplainDeps {
  clock: () => number;
  /** Null when the URL is in scope; else the rule that keeps it out, in words. */
  scopeProblem: (url: string) => string | null;
  frontier: Pick<Frontier, 'inspect'>;
  /** The run whose URL this is; the default run (the single crawl) unless given. */
  runId?: string;
  locate: (url: string) => Located | null;
  crawlerOf: (sessionId: string) => string | null;
  /** The host's politeness now; absent when nothing is running (an answer from files alone). */
  gate?: { explain(host: string, now: number): HostPoliteness };
  robots?: (url: string) => RobotsView | null;
  /** The run's spelling of a normalised URL (without the query parameters it strips), if it has one. */
  canonical?: ((normalized: string) => string) | null;
}

const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();

/**
 * "Why not yet?" for one URL: out of scope (which rule), disallowed by robots (which line), another
 * spelling of a URL the crawl holds, waiting for politeness (until when), leased to which crawler,
 * retrying (attempt, last error), or done. Throws InvalidInputError for a URL that is not one.
 */
export async function explainUrl(url: string, deps: ExplainDeps): Promise<WhyAnswer> {
  const spelled = normalizeUrl(url);
  const normalized = deps.canonical ? deps.canonical(spelled) : spelled;
  const now = deps.clock();
  const host = hostOfNormalized(normalized) ?? '';
  const duplicateOf = normalized !== url ? normalized : null;
  const robotsView = deps.robots?.(normalized) ?? null;
  const robots = robotsView
    ? {
        state: robotsView.state,
        line: robotsView.line ?? null,
        rule: robotsView.rule ?? null,
        until: iso(robotsView.until),
      }
    : null;
  const politeness = deps.gate ? hostPolitenessView(deps.gate.explain(host, now), now) : null;
  const answer = (
    state: WhyAnswer['state'],
    reason: string,
    more: Partial<Pick<WhyAnswer, 'task' | 'host' | 'crawler'>> = {},
  ): WhyAnswer => ({
    url,
    normalized,
    state,
    reason,
    duplicateOf,
    task: more.task ?? null,
    host: more.host ?? null,
    crawler: more.crawler ?? null,
    robots,
  });

  const task = (await deps.frontier.inspect?.(deps.runId ?? DEFAULT_RUN_ID, normalized)) ?? null;
  const taskView = task ? viewOf(task) : null;
  const same = duplicateOf ? ` (as ${normalized})` : '';
  if (task?.state === 'done') return answer('done', `fetched and recorded${same}`, { task: taskView });
  if (task?.state === 'cancelled') {
    return answer('failed', `its run was cancelled before it was fetched${same}`, { task: taskView });
  }
  if (task?.state === 'failed') {
    const denied = task.lastError?.startsWith('ROBOTS_DENIED') === true;
    return answer(
      denied ? 'robots-denied' : 'failed',
      `${denied ? 'disallowed by robots.txt' : 'failed for good'} after attempt ${task.attempt}: ${task.lastError ?? 'no error kept'}`,
      { task: taskView },
    );
  }
  const located = deps.locate(normalized);
  if (located?.where === 'in-flight') {
    const crawlerId = deps.crawlerOf(located.sessionId) ?? 'a crawler that left';
    return answer(
      'in-flight',
      `being fetched by ${crawlerId} since ${iso(located.sentAt)} (attempt ${located.lease.attempt})`,
      {
        task: taskView,
        host: politeness,
        crawler: { crawlerId, sessionId: located.sessionId, since: iso(located.sentAt) ?? '' },
      },
    );
  }
  if (robotsView?.state === 'disallowed') {
    return answer(
      'robots-denied',
      `disallowed by robots.txt${robotsView.line ? ` line ${robotsView.line}` : ''}${robotsView.rule ? `: ${robotsView.rule}` : ''}`,
      { task: taskView, host: politeness },
    );
  }
  if (task === null) {
    const scope = deps.scopeProblem(normalized);
    if (scope !== null) return answer('out-of-scope', scope, { host: politeness });
    return answer(
      'not-discovered',
      'in scope, but no crawled page has linked to it (yet), and it is no seed',
      {
        host: politeness,
      },
    );
  }
  if (task.state === 'delayed') {
    return answer(
      'retrying',
      `attempt ${task.attempt} is due at ${iso(task.availableAt)}; last error: ${task.lastError ?? 'none'}`,
      { task: taskView, host: politeness },
    );
  }
  const wait = waitReason(politeness, robotsView, now);
  if (located?.where === 'buffer' || wait !== null) {
    return answer(
      'waiting',
      `${located ? 'next in line for its host' : 'queued'}; ${wait ?? 'may start as soon as a crawler asks for work'}`,
      { task: taskView, host: politeness },
    );
  }
  const retry = task.attempt > 1 ? ` (attempt ${task.attempt}; last error: ${task.lastError ?? 'none'})` : '';
  return answer('queued', `queued in the frontier behind other tasks${retry}`, {
    task: taskView,
    host: politeness,
  });
}

function waitReason(host: WhyAnswer['host'], robots: RobotsView | null, now: number): string | null {
  if (robots && ['unknown', 'fetching', 'deferred'].includes(robots.state)) {
    return robots.state === 'deferred'
      ? `its host's robots.txt could not be read; trying again at ${iso(robots.until)}`
      : `waiting for its host's robots.txt (${robots.state})`;
  }
  if (host === null) return null;
  if (host.pausedUntil)
    return `its host is paused until ${host.pausedUntil} (${host.pauseReason ?? 'cool-down'})`;
  if (host.inFlight >= host.concurrency) {
    return `its host has ${host.inFlight} requests in flight, the most allowed (${host.concurrency})`;
  }
  if (host.nextStartAt && Date.parse(host.nextStartAt) > now) {
    return `politeness: its host's next request may start at ${host.nextStartAt} (delay ${host.delayMs} ms)`;
  }
  return null;
}

function viewOf(task: TaskView): WhyAnswer['task'] {
  return {
    state: task.state,
    attempt: task.attempt,
    lastError: task.lastError,
    availableAt: iso(task.availableAt),
    depth: task.depth,
    parentUrl: task.parentUrl,
  };
}
