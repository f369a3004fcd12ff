import { isIP } from 'node:net';
import { z } from 'zod';
import { defaultCharsetSchema } from '../shared/protocol/charset-label.js';
import { field } from '../shared/config/load.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../shared/lifecycle/drain.js';
import { kafkaSettingsSchema } from '../shared/config/kafka-settings.js';
import { s3SettingsSchema } from '../shared/config/s3-settings.js';
import { renderHostsSchema, renderModeSchema } from '../shared/protocol/render-rules.js';
import {
  DEFAULT_MAX_LINKS_PER_PAGE,
  DEFAULT_MAX_URL_LENGTH,
  MAX_LINKS_PER_PAGE_LIMIT,
  MAX_URL_LENGTH_LIMIT,
} from '../shared/protocol/link-limits.js';
import { hostRulesSchema, parseHostRules } from '../shared/politeness/host-rules.js';
import type { RefinementCtx } from 'zod';
import { proxyUrlSchema } from '../shared/protocol/proxy-url.js';
import { SETTLER_DEFAULTS } from './outcomes/settler-limits.js';
import { hostPatternSchema } from '../shared/url/host-patterns.js';
import { MIN_TOKEN_LENGTH } from '../shared/config/cluster-token.js';
import { ENDPOINT_DEFAULTS } from './ws/endpoint-settings.js';

/** Scheduler settings; each key can be set as ACKCRAWL_<KEY> (e.g. ACKCRAWL_HOST_DELAY_MS). */
export const schedulerConfigSchema = z.object({
  listenHost: z.string().default('127.0.0.1'),
  /** Where agents, crawlers and the CLI look by default (`ackcrawl crawl` sets 0: any free port). */
  listenPort: field.int().max(65535).default(8700),
  /**
   * Shared secret crawlers present on the WebSocket upgrade and API clients as a bearer token.
   * Absent: the one in `<dataDir>/token`, created (0600) at the first start.
   */
  token: z.string().min(MIN_TOKEN_LENGTH).optional(),
  /** Host names the scheduler answers besides loopback ones (and, off loopback, IPs and its hostname). */
  allowedHosts: field
    .list()
    .pipe(z.array(z.union([z.literal('*'), hostPatternSchema])))
    .default([]),
  /** TCP connections at once, in all and per remote address; more are refused with 503 / 429. */
  maxConnections: field.int(1).default(ENDPOINT_DEFAULTS.maxConnections),
  maxConnectionsPerAddress: field.int(1).default(ENDPOINT_DEFAULTS.maxConnectionsPerAddress),
  /** A crawler socket that has not said hello by then is closed. */
  helloTimeoutMs: field.int(100).default(ENDPOINT_DEFAULTS.helloTimeoutMs),
  /** Tasks one crawler session may hold (sent and unanswered, plus credit). */
  maxSessionCredit: field.int(1).default(ENDPOINT_DEFAULTS.maxSessionCredit),
  /** Time for a request's headers to arrive, and for the whole request (API and upgrades). */
  headersTimeoutMs: field.int(100).default(ENDPOINT_DEFAULTS.headersTimeoutMs),
  requestTimeoutMs: field.int(100).default(ENDPOINT_DEFAULTS.requestTimeoutMs),
  /**
   * Where URLs wait: RabbitMQ (distributed, the default for this role) or a SQLite file in outDir
   * (embedded: `ackcrawl crawl` sets sqlite + file).
   */
  frontier: z.enum(['rabbitmq', 'sqlite']).default('rabbitmq'),
  /** Where page records go: Kafka (+ MinIO for large bodies) or JSON-lines files in outDir. */
  sink: z.enum(['kafka', 'file']).default('kafka'),
  outDir: z.string().min(1).default('./crawl-output'),
  /** Distributed state of this scheduler: the seen-set ledger and the submitted crawl. */
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  amqpUrl: z
    .string()
    .regex(/^amqps?:\/\//, 'an amqp:// or amqps:// URL')
    .default('amqp://guest:guest@127.0.0.1:5672'),
  queuePrefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default('ackcrawl'),
  ...kafkaSettingsSchema.shape,
  ...s3SettingsSchema.shape,
  seeds: field.list().default([]),
  maxPages: field.int().default(0),
  maxDepth: field.int().default(0),
  scope: z.enum(['host', 'domain', 'any']).default('host'),
  hostConcurrency: field.int(1).default(2),
  hostDelayMs: field.int().default(500),
  /** Per-host overrides: a JSON array in a config file, or `host concurrency=N delay=MS adaptive; …`. */
  hostRules: z.preprocess(hostRulesText, hostRulesSchema).default([]),
  /** Every host's delay follows its response time (never below hostDelayMs). */
  adaptiveDelay: field.bool().default(false),
  maxCrawlDelayMs: field.int().default(30_000),
  maxCooldownMs: field.int(1).default(3_600_000),
  retryDelayMs: field.int().default(300_000),
  maxAttempts: field.int(1).default(3),
  /** Render every page in a browser (`always`) or none (`never`); needs render crawlers. */
  render: renderModeSchema.default('never'),
  /** Host patterns whose pages are rendered whatever `render` says (example.com, *.example.com). */
  renderHosts: field.list().pipe(renderHostsSchema).default([]),
  leaseMs: field.int(1000).default(120_000),
  /**
   * On SIGTERM: how long to wait for crawlers to deliver the outcomes of the tasks they run (and
   * hand back the rest) before closing; crawlers read the same setting for their own drain.
   */
  drainTimeoutMs: field.int(0).default(DEFAULT_DRAIN_TIMEOUT_MS),
  heartbeatMs: field.int(100).default(5_000),
  userAgent: z.string().min(1).default('ackcrawl/0.1 (+https://github.com/ackcrawl/ackcrawl)'),
  /** User-Agents to rotate through, one per line in the environment (userAgent stays the identity). */
  userAgents: field.lines().default([]),
  /** Proxy URLs (http, https, socks4(a), socks5(h), optional user:pass), by spaces or commas. */
  proxies: field.list(proxyUrlSchema).default([]),
  proxyMaxFailures: field.int(1).default(3),
  proxyCooloffMs: field.int(1).default(60_000),
  connectTimeoutMs: field.int(1).default(10_000),
  responseTimeoutMs: field.int(1).default(20_000),
  totalTimeoutMs: field.int(1).default(60_000),
  maxRedirects: field.int().default(10),
  maxBodyBytes: field.int(1).default(10 * 1024 * 1024),
  allowPrivate: field.bool().default(false),
  /** Soft link limits, sent to crawlers with the fetch settings (shared/protocol/link-limits.ts). */
  maxUrlLength: field.int(1).max(MAX_URL_LENGTH_LIMIT).default(DEFAULT_MAX_URL_LENGTH),
  maxLinksPerPage: field.int(1).max(MAX_LINKS_PER_PAGE_LIMIT).default(DEFAULT_MAX_LINKS_PER_PAGE),
  /** Charset of pages that name none and are not UTF-8 (e.g. gbk); windows-1252 unless set. */
  defaultCharset: defaultCharsetSchema.optional(),
  /** With allowPrivate off, IPs or CIDRs fetched anyway (e.g. `10.1.2.3 192.168.0.0/16`). */
  allowAddresses: field
    .list()
    .pipe(z.array(z.string().refine(isIpOrCidr, 'an IP address or CIDR, e.g. 10.1.2.3 or 10.1.0.0/16')))
    .default([]),
  gzip: field.bool().default(false),
  segmentBytes: field.int(1024).default(64 * 1024 * 1024),
  bufferSize: field.int(1).default(2_000),
  /**
   * Bytes of outcomes (page records and their links) held while they wait to be made durable, e.g.
   * while Kafka, MinIO or the disk is down or full; past it no task is dispatched until they drain.
   */
  outcomeBacklogBytes: field.int(1024 * 1024).default(SETTLER_DEFAULTS.maxBacklogBytes),
  /** Bytes of page records one commit hands to the page sink at most (a larger record goes alone). */
  sinkBatchBytes: field.int(64 * 1024).default(SETTLER_DEFAULTS.maxBatchBytes),
  /** A stall that lasts (outcomes cannot be made durable) is logged again this often. */
  stallLogIntervalMs: field.int(1000).default(SETTLER_DEFAULTS.stallLogIntervalMs),
  exitWhenDone: field.bool().default(false),
  /** robots.txt and sitemaps (scheduler/robots; docs/configuration.md). */
  respectRobots: field.bool().default(true),
  sitemaps: field.bool().default(false),
  robotsTtlMs: field.int(1).default(24 * 3600 * 1000),
  robotsRetryMs: field.int(1).default(1_000),
  robotsRetryMaxMs: field.int(1).default(300_000),
  robotsCacheHosts: field.int(1).default(10_000),
  robotsCacheBytes: field.int(1024).default(64 * 1024 * 1024),
  sitemapMaxDepth: field.int().default(3),
  sitemapMaxUrls: field.int(1).default(50_000),
  sitemapMaxBytes: field.int(1024).default(50 * 1024 * 1024),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type SchedulerConfig = z.infer<typeof schedulerConfigSchema>;

/** ACKCRAWL_HOST_RULES is text: a JSON array, or the CLI's `host concurrency=N delay=MS; …` form. */
function hostRulesText(value: unknown, ctx: RefinementCtx): unknown {
  if (typeof value !== 'string') return value;
  try {
    return value.trim().startsWith('[') ? (JSON.parse(value) as unknown) : parseHostRules(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
    return z.NEVER;
  }
}

function isIpOrCidr(value: string): boolean {
  const [ip, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || ip === undefined) return false;
  const family = isIP(ip);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
