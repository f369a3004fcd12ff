import { z } from 'zod';
import { VALIDATORS_INDEX_DEFAULTS } from './recrawl/validators-index.js';
import { field } from '../shared/config/load.js';
import { MAX_SHARDS } from '../shared/adapters/frontier/rabbitmq/shards.js';
import { amqpUrlsSchema } from '../shared/config/amqp-connect.js';
import { DEFAULT_DRAIN_TIMEOUT_MS } from '../shared/lifecycle/drain.js';
import { kafkaSettingsSchema } from '../shared/config/kafka-settings.js';
import { s3SettingsSchema } from '../shared/config/s3-settings.js';
import { checkTlsPair, tlsClientShape, tlsListenerShape } from '../shared/config/tls.js';
import { crawlSettingsTextShape, seedsSchema, settingFromText } from '../shared/crawl-settings/index.js';
import { SETTLER_DEFAULTS } from './outcomes/settler-limits.js';
import { hostPatternSchema } from '../shared/url/host-patterns.js';
import { MIN_TOKEN_LENGTH } from '../shared/config/cluster-token.js';
import { ENDPOINT_DEFAULTS } from './ws/endpoint-settings.js';
import { sqlSettingsSchema } from '../shared/config/sql-settings.js';
import { DEFAULT_RUN_CONTROL_EXCHANGE } from '../shared/adapters/run-control/rabbit-run-control.js';
import { schedulerIdPattern } from './runs/scheduler-id.js';
import { ROBOTS_CACHE_DEFAULTS } from './robots/robots-settings.js';

const schedulerFields = z.object({
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
  /**
   * The recrawl index (docs/recrawl.md): each URL's last ETag, Last-Modified, capture id and links
   * per job, for the conditional requests of the job's later runs. Unset: `recrawl-index.sqlite`
   * in `outDir` with the SQLite frontier (`ackcrawl crawl`, `ackcrawl serve`), else in `dataDir`;
   * `off`: none (every page is fetched in full).
   */
  recrawlIndex: z.string().min(1).optional(),
  /** URLs the recrawl index keeps over all jobs; the least recently settled go first. */
  recrawlIndexMaxEntries: field.int(1).default(VALIDATORS_INDEX_DEFAULTS.maxEntries),
  /** RabbitMQ: one URL, or the nodes of a cluster (spaces or commas), tried in turn. */
  amqpUrl: amqpUrlsSchema,
  queuePrefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default('ackcrawl'),
  /**
   * Shards the hosts are split into among the schedulers of the prefix (1: not split). Above 1,
   * each shard is consumed by one scheduler, chosen by rendezvous hashing among those with
   * crawlers, so each host has one scheduler for its politeness (docs/cluster.md, "Several
   * schedulers"). Every scheduler of a prefix needs the same number.
   */
  shards: field.int(1).max(MAX_SHARDS).default(1),
  /**
   * The control plane (scheduler/runs/run-sync.ts): the SQL store with the runs this scheduler
   * serves (`sqlUrl`, ACKCRAWL_SQL_URL; unset: SQLite `<dataDir>/ackcrawl.db`, the master's
   * default too), commands over RabbitMQ (`amqpUrl`) when the frontier is RabbitMQ.
   */
  ...sqlSettingsSchema.shape,
  /**
   * Serve the runs in SQL. Unset: on, unless `seeds` are configured (`ackcrawl crawl`'s one crawl,
   * which has no control plane).
   */
  serveRuns: field.bool().optional(),
  /** This scheduler in SQL; unset: the one kept in `<dataDir>/scheduler-id`, made at first start. */
  schedulerId: z.string().regex(schedulerIdPattern).optional(),
  /** The fanout exchange of the master's run commands (the master's setting of the same name). */
  runControlExchange: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,200}$/)
    .default(DEFAULT_RUN_CONTROL_EXCHANGE),
  /** How often SQL is read for the runs to serve, commands or not. */
  runSyncIntervalMs: field.int(100).default(3_000),
  /**
   * How often the served runs' counters and heartbeat go to SQL (the master's setting of the same
   * name says how often it expects them: keep the master's at least this).
   */
  runHeartbeatMs: field.int(100).default(1_000),
  ...kafkaSettingsSchema.shape,
  ...s3SettingsSchema.shape,
  /**
   * The crawl's settings (shared/crawl-settings, docs/crawl-settings.md), each as ACKCRAWL_<KEY>.
   * Without seeds, the scheduler waits for a crawl (`POST /crawl`) or resumes the one in job.json;
   * a submitted crawl's absent settings are these.
   */
  ...crawlSettingsTextShape,
  seeds: z
    .preprocess((v) => (typeof v === 'string' ? settingFromText('seeds', v) : v), seedsSchema)
    .default([]),
  leaseMs: field.int(1000).default(120_000),
  /**
   * On SIGTERM: how long to wait for crawlers to deliver the outcomes of the tasks they run (and
   * hand back the rest) before closing; crawlers read the same setting for their own drain.
   */
  drainTimeoutMs: field.int(0).default(DEFAULT_DRAIN_TIMEOUT_MS),
  heartbeatMs: field.int(100).default(5_000),
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
  /**
   * Serve on this inherited file descriptor, a socket the parent process bound and listens on
   * (the embedded crawl), instead of binding listenHost:listenPort.
   */
  listenFd: field.int(3).optional(),
  /** The robots.txt cache (scheduler/robots; docs/configuration.md). */
  robotsTtlMs: field.int(1).default(ROBOTS_CACHE_DEFAULTS.ttlMs),
  robotsRetryMs: field.int(1).default(ROBOTS_CACHE_DEFAULTS.retryMs),
  robotsRetryMaxMs: field.int(1).default(ROBOTS_CACHE_DEFAULTS.retryMaxMs),
  robotsCacheHosts: field.int(1).default(ROBOTS_CACHE_DEFAULTS.maxHosts),
  robotsCacheBytes: field.int(1024).default(ROBOTS_CACHE_DEFAULTS.maxBytes),
  /** TLS: the listener's certificate and key (https + wss), the CA its clients trust (docs/tls.md). */
  ...tlsListenerShape,
  ...tlsClientShape,
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Scheduler settings; each key can be set as ACKCRAWL_<KEY> (e.g. ACKCRAWL_HOST_DELAY_MS). */
export const schedulerConfigSchema = schedulerFields.superRefine(checkTlsPair);

export type SchedulerConfig = z.infer<typeof schedulerConfigSchema>;
