import type { Logger } from '../../shared/logger.js';
import type { DecodedOutcome } from '../../shared/protocol/outcome-frame.js';
import type { SitemapEntry } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { CrashTally } from '../dispatch/crash-tally.js';
import { decideRetry, type RetryPolicyOptions } from '../retry/retry-policy.js';
import { sitemapEntryTasks } from '../robots/sitemap-tasks.js';
import type { HostedRun } from '../runs/hosted-run.js';
import type { Settler } from './settler.js';
import type { CaptureUpdate, ValidatorsIndex } from '../recrawl/validators-index.js';
import type { PageOutcomeLabel, SchedulerMetrics } from '../metrics/scheduler-metrics.js';

export interface OutcomeRouting {
  dispatcher: Dispatcher;
  settler: Settler;
  crashes: CrashTally;
  /** The lease's run; undefined when it is not hosted (its outcome is still settled). */
  runOf: (lease: Lease) => HostedRun | undefined;
  /** Retry settings for a task whose run is not hosted. */
  fallbackRetry: RetryPolicyOptions;
  /** The recrawl index (absent: no recrawls): a not-modified page's links are the confirmed capture's. */
  recrawl?: Pick<ValidatorsIndex, 'lookup'>;
  logger: Logger;
  /** Counts each outcome (pages, fetch duration, bytes); absent: nothing is counted. */
  metrics?: Pick<SchedulerMetrics, 'page'>;
  /** For the fetch duration of a crawler that does not report one (from dispatch to outcome). */
  clock?: () => number;
}

/**
 * A crawler's outcome for one task: stale ones are ignored; a page's links (or a sitemap's
 * entries) go through its run's scope and limits into the settler with the ack; a failure goes
 * through its run's retry policy (retry now, later, or a final failure record).
 */
export function routeOutcome(
  deps: OutcomeRouting,
  sessionId: string,
  { header, record }: DecodedOutcome,
): void {
  const flight = deps.dispatcher.completeFlight(sessionId, header.taskId, {
    status: header.status ?? header.failure?.status ?? null,
    responseMs: header.fetchMs ?? null,
    retryAfterMs: header.failure?.retryAfterMs ?? null,
  });
  const lease = flight?.lease;
  if (!lease) {
    deps.logger.debug({ taskId: header.taskId }, 'stale outcome ignored (task was handed back)');
    return;
  }
  const run = deps.runOf(lease);
  run?.recentHosts.record(lease.host, (deps.clock ?? Date.now)());
  // What the host set (an error page's cookies too) joins the run's session.
  if (header.cookies && run?.cookies) run.cookies.merge(header.cookies);
  const count = (outcome: PageOutcomeLabel): void => {
    if (!deps.metrics) return;
    const ms = header.fetchMs ?? (deps.clock ?? Date.now)() - flight.sentAt;
    deps.metrics.page({
      outcome,
      status: header.status ?? header.failure?.status ?? null,
      seconds: Math.max(0, ms) / 1000,
      bytes: record.length,
    });
  };
  const sinkRecord = { key: lease.url, value: record };
  if (header.outcome !== 'failed') {
    // A run no longer hosted here follows no links: its outcome is kept, its crawl goes no further.
    const discovered = !run
      ? []
      : lease.kind === 'sitemap' && header.entries
        ? sitemapEntryTasks(strippedEntries(header.entries, run.stripUrl), lease, {
            inScope: run.inScope,
            maxDepth: run.settings.sitemapMaxDepth,
            pageLevel: run.level(0),
          })
        : run.linkFilter(
            deps.settler.unknownLinks(
              lease.runId,
              run.stripLinks(
                header.outcome === 'not-modified' ? confirmedLinks(deps, run.jobId, lease.url) : header.links,
              ),
            ),
            lease,
          );
    const capture: CaptureUpdate | undefined =
      run && flight.captureId !== undefined && lease.kind !== 'sitemap'
        ? {
            jobId: run.jobId,
            runId: lease.runId,
            url: lease.url,
            kind: header.outcome,
            captureId: flight.captureId,
            validators: header.validators,
            links: header.links,
          }
        : undefined;
    count(header.outcome === 'ok' ? 'ok' : 'not_modified');
    deps.settler.ack(lease, sinkRecord, discovered, capture);
    deps.crashes.forget(lease.taskId);
    return;
  }
  const failure = header.failure ?? {
    code: 'UNKNOWN',
    message: 'failed without a reason',
    retriable: false,
    status: null,
    retryAfterMs: null,
  };
  const decision = decideRetry(
    {
      code: failure.code,
      reportedRetriable: failure.retriable,
      attempt: lease.attempt,
      retryAfterMs: failure.retryAfterMs,
    },
    run?.retry ?? deps.fallbackRetry,
  );
  const reason = `${failure.code}: ${failure.message}`;
  count(decision.kind === 'final' ? 'failed' : 'retry');
  if (decision.kind === 'final') {
    deps.settler.fail(lease, sinkRecord, reason);
    deps.crashes.forget(lease.taskId);
  } else {
    deps.settler.retry(lease, decision.delayMs, reason);
  }
}

/**
 * The links of the capture a 304 confirmed: the page did not change, so neither did they, and the
 * run goes on through them as it would have through its body (docs/recrawl.md). None when the index
 * no longer has it (dropped at its bound): the run then follows no link of that page.
 */
export function confirmedLinks(
  deps: Pick<OutcomeRouting, 'recrawl' | 'logger'>,
  jobId: string,
  url: string,
): string[] {
  try {
    return deps.recrawl?.lookup(jobId, url)?.links ?? [];
  } catch (err) {
    deps.logger.warn({ err, url }, 'could not read the links of a not-modified page from the recrawl index');
    return [];
  }
}

/** A sitemap's entries with the run's query parameters stripped from their URLs, once each. */
function strippedEntries(
  entries: readonly SitemapEntry[],
  strip: ((url: string) => string) | null,
): readonly SitemapEntry[] {
  if (strip === null) return entries;
  const byUrl = new Map<string, SitemapEntry>();
  for (const entry of entries) {
    const url = strip(entry.url);
    if (!byUrl.has(url)) byUrl.set(url, url === entry.url ? entry : { ...entry, url });
  }
  return [...byUrl.values()];
}
