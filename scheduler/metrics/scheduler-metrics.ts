import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { errorCodeLabel, statusClass } from '../../shared/metrics/labels.js';

/** What the crawler said of a fetch, and what the scheduler made of a failure. */
export type PageOutcomeLabel = 'ok' | 'not_modified' | 'retry' | 'failed';

/** One crawler outcome as counted: its status (null: no response), duration and record size. */
export interface PageObservation {
  outcome: PageOutcomeLabel;
  status: number | null;
  seconds: number;
  bytes: number;
}

/** What the gauges read at each scrape (nothing is kept up to date on the hot path for them). */
export interface SchedulerGaugeSource {
  /** The runs hosted here; only active and paused ones get series (a `run` label stays bounded). */
  runs(): readonly { runId: string; state: string; counters: { queued: number; inFlight: number } }[];
  /** Crawler WebSocket sessions that said hello. */
  sessions(): number;
  /** Tasks finally failed in the frontier (its dead letters), every run together. */
  deadLetters(): number;
  /** Buffered tasks whose host may not start yet (delay, concurrency, cool-down). */
  politenessWaiting(): number;
  /** How long the outcomes being made durable have been at it, ms (0: none are). */
  commitWaitMs(): number;
  /** The frontier's broker blocks this scheduler's publishing (a resource alarm); false without a broker. */
  publishBlocked(): boolean;
}

export interface SchedulerMetrics {
  /** A crawler's outcome for a task (scheduler/outcomes/route-outcome.ts). */
  page(observation: PageObservation): void;
  /** A retry or final failure handed to the settler, with its `CODE: message` error. */
  retry(delayMs: number, error: string): void;
  finalFailure(error: string): void;
  /** A host was paused: a 429/503 cool-down, or its robots.txt could not be read. */
  cooldown(reason: 'slow_down' | 'deferred'): void;
  /** Reads the gauges from `source` at each scrape (the scheduler calls it once it is built). */
  watch(source: SchedulerGaugeSource): void;
}

/** Fetch durations, seconds: a cached local page in milliseconds up to the default 60 s timeout. */
export const FETCH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const OUTCOMES: readonly PageOutcomeLabel[] = ['ok', 'not_modified', 'retry', 'failed'];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'none'] as const;
const LIVE_RUN_STATES = new Set(['active', 'paused']);

/** A counter child shown at 0 until it counts. */
function zeroed<C extends { inc(value?: number): void }>(child: C): C {
  child.inc(0);
  return child;
}

/** Matches errorCodeOf in scheduler/outcomes/settler.ts: outcome errors read `CODE: message`. */
const codeOf = (error: string): string => /^([A-Z][A-Z0-9_]*):/.exec(error)?.[1] ?? 'UNKNOWN';

/**
 * The scheduler's series on `registry` (docs/metrics.md). Counters and the histogram are updated
 * where the numbers are made, through children made once (no label object per page); gauges are
 * read from the scheduler at scrape time, so the run label exists only for runs hosted now.
 */
export function createSchedulerMetrics(registry: Registry): SchedulerMetrics {
  const registers = [registry];
  const pages = new Counter({
    name: 'ackcrawl_pages_total',
    help: "Crawler outcomes by what became of them (ok, not_modified, retry, failed: final) and the response's status class (none: no response)",
    labelNames: ['outcome', 'status_class'] as const,
    registers,
  });
  // Children made once (and shown at 0 from the start): counting a page allocates no label object.
  const pageChildren = new Map<string, ReturnType<typeof pages.labels>>();
  for (const outcome of OUTCOMES)
    for (const cls of STATUS_CLASSES)
      pageChildren.set(`${outcome} ${cls}`, zeroed(pages.labels(outcome, cls)));
  const duration = new Histogram({
    name: 'ackcrawl_fetch_duration_seconds',
    help: 'Fetch duration as the crawler reports it (fetchMs), else from dispatch to outcome, seconds',
    buckets: FETCH_BUCKETS,
    registers,
  });
  const bytes = new Counter({
    name: 'ackcrawl_received_bytes_total',
    help: 'Page records received from crawlers (the record as it goes to the page sink), bytes',
    registers,
  });
  const errors = new Counter({
    name: 'ackcrawl_errors_total',
    help: 'Failed attempts (retried or final) by error code (docs/error-codes.md; OTHER: a code not in the catalogue)',
    labelNames: ['code'] as const,
    registers,
  });
  const errorChildren = new Map<string, ReturnType<typeof errors.labels>>();
  const countError = (error: string): void => {
    const code = errorCodeLabel(codeOf(error));
    let child = errorChildren.get(code);
    if (child === undefined) errorChildren.set(code, (child = errors.labels(code)));
    child.inc();
  };
  const retries = new Counter({
    name: 'ackcrawl_retries_total',
    help: 'Retries by tier: immediate (first failure) or delayed (after the retry delay or a Retry-After)',
    labelNames: ['tier'] as const,
    registers,
  });
  const immediate = zeroed(retries.labels('immediate'));
  const delayed = zeroed(retries.labels('delayed'));
  const deadLettered = new Counter({
    name: 'ackcrawl_dead_letters_total',
    help: 'Tasks finally failed (the third tier): recorded as failed and dead-lettered',
    registers,
  });
  const cooldowns = new Counter({
    name: 'ackcrawl_politeness_cooldowns_total',
    help: 'Hosts paused by politeness: slow_down (a 429 or 503, Retry-After or backoff), deferred (robots.txt unreadable)',
    labelNames: ['reason'] as const,
    registers,
  });
  const cooldownChildren = {
    slow_down: zeroed(cooldowns.labels('slow_down')),
    deferred: zeroed(cooldowns.labels('deferred')),
  };

  let source: SchedulerGaugeSource | null = null;
  new Gauge({
    name: 'ackcrawl_run_queued_tasks',
    help: 'Tasks of a run waiting in the frontier (ready or delayed), for the runs hosted on this scheduler',
    labelNames: ['run'] as const,
    registers,
    collect() {
      this.reset();
      for (const run of source?.runs() ?? [])
        if (LIVE_RUN_STATES.has(run.state)) this.labels(run.runId).set(run.counters.queued);
    },
  });
  new Gauge({
    name: 'ackcrawl_run_in_flight_tasks',
    help: 'Tasks of a run sent to crawlers and not finished, for the runs hosted on this scheduler',
    labelNames: ['run'] as const,
    registers,
    collect() {
      this.reset();
      for (const run of source?.runs() ?? [])
        if (LIVE_RUN_STATES.has(run.state)) this.labels(run.runId).set(run.counters.inFlight);
    },
  });
  new Gauge({
    name: 'ackcrawl_websocket_sessions',
    help: 'Crawler WebSocket sessions connected to this scheduler (past their hello)',
    registers,
    collect() {
      this.set(source?.sessions() ?? 0);
    },
  });
  new Gauge({
    name: 'ackcrawl_dead_letter_tasks',
    help: 'Tasks finally failed in the frontier (its dead letters), every run together',
    registers,
    collect() {
      this.set(source?.deadLetters() ?? 0);
    },
  });
  new Gauge({
    name: 'ackcrawl_politeness_waiting_tasks',
    help: "Tasks in the dispatch buffer held back by their host's politeness (delay, concurrency, cool-down)",
    registers,
    collect() {
      this.set(source?.politenessWaiting() ?? 0);
    },
  });

  new Gauge({
    name: 'ackcrawl_settle_wait_seconds',
    help: 'How long the outcomes being made durable have been at it (0: none are); grows while a store fails or a broker blocks, and nothing is acknowledged meanwhile',
    registers,
    collect() {
      this.set((source?.commitWaitMs() ?? 0) / 1000);
    },
  });
  new Gauge({
    name: 'ackcrawl_frontier_publish_blocked',
    help: "1 while the frontier's broker blocks this scheduler's publishing (a RabbitMQ disk or memory alarm), else 0",
    registers,
    collect() {
      this.set(source?.publishBlocked() ? 1 : 0);
    },
  });

  return {
    page(o) {
      pageChildren.get(`${o.outcome} ${statusClass(o.status)}`)?.inc();
      duration.observe(o.seconds);
      bytes.inc(o.bytes);
    },
    retry(delayMs, error) {
      (delayMs > 0 ? delayed : immediate).inc();
      countError(error);
    },
    finalFailure(error) {
      deadLettered.inc();
      countError(error);
    },
    cooldown(reason) {
      cooldownChildren[reason].inc();
    },
    watch(next) {
      source = next;
    },
  };
}
