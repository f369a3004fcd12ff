import { z } from 'zod';
import { RUN_STATES } from '../../../shared/ports/sql-store.js';
import { RUN_HOSTS_DEFAULT_LIMIT, RUN_HOSTS_MAX_LIMIT } from '../../../shared/protocol/run-hosts.js';
import { isoTime } from './common.js';

const count = z.number().int().min(0);

export const runStateSchema = z.enum(RUN_STATES);

export const runSchema = z.object({
  id: z.string(),
  jobId: z.string(),
  state: runStateSchema.describe(
    'What the run is doing. `running` only while its scheduler reports; a run whose scheduler went quiet is shown `queued` (see `waiting`).',
  ),
  waiting: z
    .string()
    .nullable()
    .describe(
      'Why a queued run is not running (no scheduler has taken it, or its scheduler went quiet), or why a running one makes no progress (its scheduler can make no outcome durable: a store down, a full disk, RabbitMQ blocking publishing); null otherwise.',
    ),
  counters: z.object({
    done: count.describe('URLs settled with a page record (not-modified ones included).'),
    failed: count.describe('URLs that failed for good.'),
    notModified: count.describe(
      "Of done, the pages a recrawl's conditional request found unchanged (304, recorded without a body).",
    ),
    queued: count.describe('URLs waiting in the frontier.'),
    inFlight: count.describe('URLs being fetched.'),
    pagesPerSecond: z.number().min(0),
  }),
  settings: z.unknown().describe("The job's settings as they were when the run was made."),
  schedulerId: z.string().nullable().describe('The scheduler serving it, when one does.'),
  heartbeatAt: isoTime.nullable().describe("Its scheduler's last report."),
  createdAt: isoTime,
  startedAt: isoTime.nullable(),
  endedAt: isoTime.nullable(),
  endsBy: isoTime
    .nullable()
    .describe(
      'When its `maxDurationMs` is up and the master cancels it (`startedAt` plus the limit); null without a limit, before it starts, and once it ended.',
    ),
  error: z.string().nullable().describe('Why it failed or was cancelled.'),
  scheduledBy: z
    .object({
      scheduleId: z.string().describe('The schedule of the job that made the run.'),
      fireAt: isoTime.describe(
        'The fire time it was made for (one that waited behind an active run: that fire time, not when the run was made).',
      ),
    })
    .nullable()
    .describe(
      'The schedule fire time that made the run (docs/schedules.md); null for a run made through the API.',
    ),
});
export type RunView = z.input<typeof runSchema>;

export const runListQuery = z.strictObject({
  state: z
    .union([runStateSchema, z.array(runStateSchema)])
    .optional()
    .describe('Only runs shown in this state (repeatable: `?state=running&state=paused`).'),
});

export const failureSchema = z.object({
  id: z.string(),
  url: z.string(),
  code: z.string().describe('Error code (docs/error-codes.md).'),
  attempts: z.number().int(),
  lastError: z.string(),
  final: z.boolean().describe('True: failed for good; false: a retry.'),
  at: isoTime,
  retriedAt: isoTime
    .nullable()
    .describe('When it was sent back to its run (POST …/retry); null: never. It can be sent back once.'),
  requeuedAt: isoTime
    .nullable()
    .describe(
      "When the run's scheduler put its URL back into the frontier; null: not yet (or never sent back).",
    ),
});

export const failureParams = z.strictObject({
  id: z.string().min(1).max(128).describe('The run.'),
  failureId: z.string().min(1).max(32).describe('The failure (`id` in GET /runs/{id}/failures).'),
});

export const retrySchema = z
  .object({
    runId: z.string(),
    url: z.string(),
    failureId: z.string(),
    retriedAt: isoTime.describe('When it was sent back (the first time, for a second call).'),
  })
  .describe(
    "The failure's URL is durably on its way back into the run: its scheduler queues it at its next sync.",
  );

export const failuresQuery = z.strictObject({
  final: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: only final failures; absent or false: retries too.'),
});

export const whyQuery = z.strictObject({
  url: z.string().min(1).max(8192).describe('The URL to explain.'),
});

/** The scheduler's answer (shared/protocol/why.ts), passed through. */
export const whySchema = z
  .object({
    url: z.string(),
    normalized: z.string(),
    state: z
      .string()
      .describe(
        'out-of-scope, robots-denied, not-discovered, queued, waiting, retrying, in-flight, done, failed or run-ended (an ended run that logged no failure of the URL: fetched, or never found).',
      ),
    reason: z.string(),
    duplicateOf: z.string().nullable(),
    task: z.record(z.string(), z.unknown()).nullable(),
    host: z.record(z.string(), z.unknown()).nullable(),
    crawler: z.record(z.string(), z.unknown()).nullable(),
    robots: z.record(z.string(), z.unknown()).nullable(),
  })
  .describe("Where the URL is in the run and what it waits for, as the scheduler's GET /why answers.");

export const hostsQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(RUN_HOSTS_MAX_LIMIT)
    .optional()
    .describe(`Hosts answered, 1 to ${RUN_HOSTS_MAX_LIMIT} (default ${RUN_HOSTS_DEFAULT_LIMIT}).`),
});

const runHostSchema = z.object({
  host: z.string(),
  inFlight: count.describe('Requests to the host in flight now, of every run (what `concurrency` limits).'),
  concurrency: count.describe('Requests the host may have in flight at once.'),
  delayMs: count.describe(
    'Delay in force between two request starts (the job or a host rule, raised by robots.txt Crawl-delay or the adaptive delay).',
  ),
  crawlDelayMs: count
    .nullable()
    .describe("robots.txt Crawl-delay (capped), when the host's robots.txt has one."),
  nextStartAt: isoTime.nullable().describe('When the next request may start; null: at once.'),
  pausedUntil: isoTime
    .nullable()
    .describe(
      'Set while the host cools down after a 429 or 503 (Retry-After, else backoff) or is deferred (robots.txt unreadable).',
    ),
  pauseReason: z.string().nullable().describe('Why it is paused (`HTTP 429 cool-down #2`, say).'),
  queued: count.describe(
    'Tasks of the run the scheduler holds for the host, waiting for a crawler (a lower bound: the frontier keeps no per-host count).',
  ),
  fetched: count.describe(
    "Outcomes of the run's tasks of the host since it entered the run's list of recent hosts (the 64 most recently active are kept).",
  ),
  lastActiveAt: isoTime.nullable().describe("When an outcome of the run's tasks of the host last came in."),
});

export const runHostsSchema = z
  .object({
    runId: z.string(),
    at: isoTime.describe('When the scheduler looked (or the master, for an empty answer).'),
    items: z
      .array(runHostSchema)
      .describe('Busiest first: in flight, then queued, then recently active, then cooling down.'),
    note: z
      .string()
      .nullable()
      .describe('Why the list is empty (the run ended, no scheduler hosts it now, …); null otherwise.'),
  })
  .describe("The run's busiest hosts and their politeness now, as the scheduler hosting the run sees them.");
