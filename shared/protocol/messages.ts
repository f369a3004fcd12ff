import { z } from 'zod';
import { MAX_LINKS_PER_PAGE_LIMIT, MAX_URL_LENGTH_LIMIT } from './link-limits.js';
import { proxyUrlSchema } from './proxy-url.js';
import { requestHeadersSchema } from './request-headers.js';
import { fixedCookiesSchema } from './fixed-cookies.js';
import { wireCookiesSchema } from './wire-cookie.js';
import { MAX_LASTMOD_LENGTH, MAX_VALIDATOR_LENGTH } from './task.js';

/**
 * The scheduler⇄crawler WebSocket protocol. Control messages are JSON text frames; a page outcome
 * is a binary frame (see outcome-frame.ts) so the scheduler can pass the record bytes to the page
 * sink without parsing them. Every inbound message is validated; a bad one gets an `error` reply.
 */

export const fetchSettingsSchema = z.object({
  userAgent: z.string().min(1),
  connectTimeoutMs: z.number().int().positive(),
  responseTimeoutMs: z.number().int().positive(),
  totalTimeoutMs: z.number().int().positive(),
  maxRedirects: z.number().int().nonnegative(),
  maxBodyBytes: z.number().int().positive(),
  allowPrivate: z.boolean(),
  /** Soft link limits (link-limits.ts); a crawler applies the defaults to those a scheduler omits. */
  maxUrlLength: z.number().int().min(1).max(MAX_URL_LENGTH_LIMIT).optional(),
  maxLinksPerPage: z.number().int().min(1).max(MAX_LINKS_PER_PAGE_LIMIT).optional(),
  /** Charset of pages that name none and are not UTF-8 (an encoding name); windows-1252 when absent. */
  defaultCharset: z.string().min(1).max(40).optional(),
  /**
   * User-Agent headers to rotate through, one per request in turn. `userAgent` stays the crawl's
   * identity (robots.txt matching); absent or empty: every request sends `userAgent`.
   */
  userAgents: z.array(z.string().min(1).max(500)).max(1000).optional(),
  /** The crawl's own request headers, each for every host or one host pattern (request-headers.ts). */
  headers: requestHeadersSchema.optional(),
  /** The crawl's own cookies, which every fetch starts with (fixed-cookies.ts). */
  cookies: fixedCookiesSchema.optional(),
  /** Proxy URLs (credentials included: this message is for crawlers only); absent or empty: direct. */
  proxies: z.array(proxyUrlSchema).max(10_000).optional(),
  /** Consecutive proxy-level failures after which a proxy is retired (default 3). */
  proxyMaxFailures: z.number().int().positive().optional(),
  /** How long a retired proxy rests before one probe request may re-admit it (default 60 s). */
  proxyCooloffMs: z.number().int().positive().optional(),
  /**
   * IPs or CIDRs fetched even when private addresses are refused (e.g. one intranet host, or the
   * loopback fixture in tests); every other private, loopback, link-local or unspecified address
   * stays refused. Direct connections only: through a proxy every private target stays refused.
   * Optional so older schedulers' welcome messages still parse.
   */
  allowAddresses: z.array(z.string().max(64)).max(1000).optional(),
  /** Sitemap limits (absent: 50,000 entries, 50 MiB uncompressed). */
  sitemapMaxUrls: z.number().int().positive().optional(),
  sitemapMaxBytes: z.number().int().positive().optional(),
});
export type FetchSettings = z.infer<typeof fetchSettingsSchema>;

/** What a conditional request needs: the earlier capture's ETag and Last-Modified, as it got them. */
export const validatorsSchema = z.object({
  etag: z.string().min(1).max(MAX_VALIDATOR_LENGTH).optional(),
  lastModified: z.string().min(1).max(MAX_VALIDATOR_LENGTH).optional(),
});
export type Validators = z.infer<typeof validatorsSchema>;

/** The validators a task is sent with, and the capture (with a body) they came from. */
export const taskValidatorsSchema = validatorsSchema.extend({
  captureId: z.string().min(1).max(100),
});
export type TaskValidators = z.infer<typeof taskValidatorsSchema>;

// crawler → scheduler
/** The first message of a session. The token is not in it: it went with the upgrade request. */
export const helloSchema = z.object({
  type: z.literal('hello'),
  protocol: z.number().int(),
  crawlerId: z.string().min(1).max(200),
  pid: z.number().int().optional(),
  /** What this crawler can do beyond fetching, e.g. `render` (it drives a browser). Absent: none. */
  capabilities: z.array(z.string().min(1).max(50)).max(20).optional(),
  /**
   * Requests this crawler runs at once for this scheduler (its share, when it serves several): the
   * capacity schedulers that split hosts weigh their shares by. Absent: an earlier crawler.
   */
  concurrency: z.number().int().positive().max(100_000).optional(),
});
export const creditSchema = z.object({
  type: z.literal('credit'),
  n: z.number().int().positive().max(10_000),
});
export const heartbeatSchema = z.object({ type: z.literal('heartbeat'), t: z.number() });
export const byeSchema = z.object({ type: z.literal('bye') });
/** The request of a task asked to `reportStart` went out (politeness counts delays from here). */
export const startedSchema = z.object({ type: z.literal('started'), taskId: z.string().min(1).max(200) });
/**
 * A task's request was redirected back to its host (`hopGrants`): may the next request go? `url`
 * is where it goes (the scheduler checks it against the host's robots.txt); a crawler that predates
 * it sends none.
 */
export const hopSchema = z.object({
  type: z.literal('hop'),
  taskId: z.string().min(1).max(200),
  url: z.string().max(8192).optional(),
});
const taskIdsSchema = z.array(z.string().min(1).max(200)).min(1).max(10_000);
/**
 * The crawler starts work on these tasks (sent before it does). Only a task being worked on counts
 * against it when its crawler dies without a goodbye (CRAWLER_CRASHED after the third time).
 */
export const workingSchema = z.object({ type: z.literal('working'), taskIds: taskIdsSchema });
/**
 * The crawler hands these tasks back unfinished (a drain: not started, or still running at its
 * deadline). They go to another crawler without counting an attempt; outcomes for them are stale.
 */
export const releaseSchema = z.object({ type: z.literal('release'), taskIds: taskIdsSchema });

/** The typed failure a crawler reports; the scheduler's retry policy decides what happens next. */
export const wireFailureSchema = z.object({
  code: z.string().min(1).max(100),
  message: z.string().max(2000),
  retriable: z.boolean(),
  status: z.number().int().nullable(),
  retryAfterMs: z.number().int().nonnegative().nullable(),
});
export type WireFailure = z.infer<typeof wireFailureSchema>;

/** The longest robots.txt a crawler sends back (the rest is ignored, as RFC 9309 allows): 500 KiB. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

/**
 * The answer to a `robots` task: the status and text of robots.txt (redirects followed), or the
 * failure that kept it from being fetched. No page record is written for it.
 */
export const robotsAnswerSchema = z.object({
  type: z.literal('robots'),
  taskId: z.string().min(1).max(200),
  status: z.number().int().nullable(),
  body: z.string().max(ROBOTS_MAX_BYTES),
  failure: wireFailureSchema.nullable(),
});
export type RobotsAnswer = z.infer<typeof robotsAnswerSchema>;

export const crawlerTextMessageSchema = z.discriminatedUnion('type', [
  helloSchema,
  creditSchema,
  heartbeatSchema,
  byeSchema,
  startedSchema,
  hopSchema,
  robotsAnswerSchema,
  workingSchema,
  releaseSchema,
]);
export type CrawlerTextMessage = z.infer<typeof crawlerTextMessageSchema>;
export type Hello = z.infer<typeof helloSchema>;

// scheduler → crawler
/**
 * The fetch settings of one run (protocol 4): sent before the first task of the run on a
 * connection, and again when they change; tasks naming the run are fetched with them. A crawler
 * keeps them for the connection (at most MAX_RUNS_PER_SESSION runs, the oldest forgotten first).
 */
export const runSettingsSchema = z.object({
  type: z.literal('run'),
  runId: z.string().min(1).max(64),
  fetch: fetchSettingsSchema,
});
export type RunSettingsMessage = z.infer<typeof runSettingsSchema>;

/** Runs whose fetch settings a crawler keeps per connection. */
export const MAX_RUNS_PER_SESSION = 1000;

export const wireTaskSchema = z.object({
  taskId: z.string(),
  url: z.string(),
  depth: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  parentUrl: z.string().nullable(),
  /** Render the page in a browser; sent only to crawlers that announced the `render` capability. */
  render: z.boolean().optional(),
  /** Send `started` when the request goes out: the host has a delay between request starts. */
  reportStart: z.boolean().optional(),
  /**
   * A redirect back to the task's host waits for the scheduler's answer: the crawler sends `hop`
   * with the target, the scheduler answers `hop-denied` when the host's robots.txt disallows it,
   * else `hop-granted` (for a paced host, when its delay allows; the hop's write is then reported
   * with `started`, as with `reportStart`).
   */
  hopGrants: z.boolean().optional(),
  /** `robots`: fetch robots.txt and answer with a `robots` message instead of an outcome. */
  kind: z.enum(['page', 'sitemap', 'robots']).optional(),
  /** The sitemap `<lastmod>` of this URL, copied to its record. */
  lastmod: z.string().max(MAX_LASTMOD_LENGTH).nullable().optional(),
  /**
   * The code the previous attempt failed with (retries only). `CONNECTION_RESET`: the crawler
   * sends the request once, not once more on a fresh socket (the server resets this URL).
   */
  lastErrorCode: z.string().max(100).optional(),
  /**
   * The run and job the task belongs to (protocol 4). The crawler fetches it with the run's fetch
   * settings (the last `run` message naming it; absent or unknown: the welcome's) and copies both
   * into its record. Absent: the scheduler's default run.
   */
  runId: z.string().min(1).max(64).optional(),
  jobId: z.string().min(1).max(200).optional(),
  /** A unique id of this fetch (a UUID per dispatched attempt), copied into its record. */
  captureId: z.string().min(1).max(100).optional(),
  /**
   * A recrawl (protocol 5): the validators of the URL's last capture in an earlier run of the job.
   * The crawler sends them as `If-None-Match` / `If-Modified-Since`; a 304 becomes a `not-modified`
   * outcome naming `captureId`, the capture it confirms (docs/recrawl.md). Absent: a full fetch.
   */
  validators: taskValidatorsSchema.optional(),
  /**
   * A run that keeps a session per host (`sessionCookies`): the cookies its crawls of the host were
   * set so far (those of its domain and parent domains, not expired). The fetch starts with them,
   * and its outcome returns the jar's cookies when a response set any. Absent: no session, the
   * fetch starts with none and returns none.
   */
  cookies: wireCookiesSchema.optional(),
});
export type WireTask = z.infer<typeof wireTaskSchema>;

export const schedulerMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('welcome'),
    protocol: z.number().int(),
    sessionId: z.string(),
    heartbeatMs: z.number().int().positive(),
    fetch: fetchSettingsSchema,
  }),
  z.object({ type: z.literal('tasks'), items: z.array(wireTaskSchema) }),
  z.object({ type: z.literal('error'), code: z.string(), message: z.string(), fatal: z.boolean() }),
  z.object({ type: z.literal('heartbeat'), t: z.number() }),
  z.object({ type: z.literal('drain') }),
  /** The answer to `hop`: the task's redirect may go to its host now. */
  z.object({ type: z.literal('hop-granted'), taskId: z.string().min(1).max(200) }),
  /**
   * The answer to a `hop` whose target the host's robots.txt disallows: the fetch stops at the
   * redirect, which is recorded with its Location as its link (refused in turn, as ROBOTS_DENIED).
   */
  z.object({ type: z.literal('hop-denied'), taskId: z.string().min(1).max(200) }),
  /** New fetch rules (a crawl was submitted with other settings); they apply to the next task. */
  z.object({ type: z.literal('settings'), fetch: fetchSettingsSchema }),
  runSettingsSchema,
]);
export type SchedulerMessage = z.infer<typeof schedulerMessageSchema>;

/** One `<url>` (a page) or `<sitemap>` (another sitemap) of a sitemap, with its `<lastmod>`. */
export const sitemapEntrySchema = z.object({
  url: z.string().max(8192),
  kind: z.enum(['page', 'sitemap']),
  lastmod: z.string().max(MAX_LASTMOD_LENGTH).nullable(),
});
export type SitemapEntry = z.infer<typeof sitemapEntrySchema>;

export const outcomeHeaderSchema = z.object({
  type: z.literal('outcome'),
  taskId: z.string().min(1).max(200),
  /** `not-modified` (protocol 5): the task's validators got a 304; the record has no body. */
  outcome: z.enum(['ok', 'failed', 'not-modified']),
  failure: wireFailureSchema.nullable(),
  links: z.array(z.string().max(8192)).max(100_000),
  /** HTTP status of the response (null: none arrived). Optional for older crawlers. */
  status: z.number().int().nullable().optional(),
  /** How long the fetch took, for adaptive politeness. Optional for older crawlers. */
  fetchMs: z.number().nonnegative().optional(),
  /** A sitemap task's entries, in place of links. */
  entries: z.array(sitemapEntrySchema).max(100_000).optional(),
  /**
   * The response's ETag and Last-Modified (protocol 5), so the scheduler keeps them for the next
   * run of the job without parsing the record. Absent: the response had neither.
   */
  validators: validatorsSchema.optional(),
  /**
   * A task sent with `cookies` whose responses set a cookie: every cookie its jar held at the end,
   * expired ones included (a deletion), for the scheduler's session of the run.
   */
  cookies: wireCookiesSchema.optional(),
});
export type OutcomeHeader = z.infer<typeof outcomeHeaderSchema>;
