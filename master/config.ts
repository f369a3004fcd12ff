import { z } from 'zod';
import { field } from '../shared/config/load.js';
import { amqpUrlsSchema } from '../shared/config/amqp-connect.js';
import { sqlSettingsSchema } from '../shared/config/sql-settings.js';
import { checkTlsPair, tlsClientShape, tlsListenerShape } from '../shared/config/tls.js';
import { hostPatternSchema } from '../shared/url/host-patterns.js';

/** The master's settings; each key can be set as ACKCRAWL_<KEY> (e.g. ACKCRAWL_MASTER_PORT). */
export const masterConfigSchema = z
  .object({
    masterHost: z.string().min(1).default('127.0.0.1'),
    masterPort: field.int().max(65535).default(8600),
    /** Host names answered besides loopback ones (and, off loopback, IPs and this host's name). */
    allowedHosts: field
      .list()
      .pipe(z.array(z.union([z.literal('*'), hostPatternSchema])))
      .default([]),
    /** The master's files (admin-token, the SQLite store unless sqlUrl says otherwise). */
    dataDir: z.string().min(1).default('./ackcrawl-data'),
    /** sqlUrl (sqlite:PATH, postgres://…, mssql://…; absent: SQLite in dataDir) and sqlCaFile. */
    ...sqlSettingsSchema.shape,
    /** The bootstrap admin token; absent: the one in <dataDir>/admin-token, created at first start. */
    adminToken: z.string().min(16).optional(),
    /**
     * The agent credential host agents present (and the master presents to them); absent: the one
     * in <dataDir>/agent-token, created at first start (docs/fleet.md).
     */
    agentToken: z.string().min(16).optional(),
    /** An agent not heard from for this long is `lost` (with its processes); at most 20 s. */
    agentLostAfterMs: field.int(1000).max(20_000).default(10_000),
    /** How often agents are told to send heartbeats, and how often the master sweeps for lost ones. */
    agentHeartbeatMs: field.int(100).default(2_000),
    agentSweepMs: field.int(100).default(1_000),
    /** How often the master ends runs past their maxDurationMs. */
    runLimitSweepMs: field.int(100).default(1_000),
    /**
     * Runs that ended more than this many days ago are deleted with their failure log and results
     * (0: kept for ever).
     */
    runRetentionDays: z.coerce.number().min(0).default(0),
    /** How often the master looks for runs past their retention. */
    runRetentionSweepMs: field.int(1_000).default(3_600_000),
    /** How commands reach schedulers: a RabbitMQ fanout exchange, or nowhere but this process. */
    runControl: z.enum(['rabbitmq', 'local']).default('rabbitmq'),
    /** RabbitMQ: one URL, or the nodes of a cluster (spaces or commas), tried in turn. */
    amqpUrl: amqpUrlsSchema,
    runControlExchange: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,200}$/)
      .default('ackcrawl.run-control'),
    /** How often schedulers report a run; a run not reported for runStaleHeartbeats of them is not shown running. */
    runHeartbeatMs: field.int(100).default(5_000),
    runStaleHeartbeats: field.int(1).default(3),
    /** Schedulers' HTTP APIs asked "why not yet?" and a run's hosts (http://host:port, comma- or space-separated). */
    schedulerApis: field.list(z.url({ protocol: /^https?$/ })).default([]),
    /**
     * The output folder of an embedded scheduler (`ackcrawl serve` sets it): the API and token in
     * the scheduler.json it writes there are asked too, after schedulerApis.
     */
    schedulerOutDir: z.string().min(1).optional(),
    /** The cluster token those APIs take; absent: <dataDir>/token if a scheduler wrote one there. */
    schedulerToken: z.string().min(16).optional(),
    /** PEM files: with both, the listener speaks HTTPS (shared/config/tls.ts). */
    ...tlsListenerShape,
    /** The CA file trusted for an amqps:// run-control broker (docs/tls.md). */
    ...tlsClientShape,
    /** The frontier's queue prefix, for the dead-letter queue (`<prefix>.failed`) the alerts watch. */
    queuePrefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/)
      .default('ackcrawl'),
    /** How often the alert engine evaluates the rules, and the delivery loop sends what is due. */
    alertIntervalMs: field.int(100).default(5_000),
    webhookIntervalMs: field.int(50).default(1_000),
    /** Webhook URLs may name private and loopback addresses (off: refused, as the crawler refuses them). */
    webhookAllowPrivate: field.bool().default(false),
    webhookTimeoutMs: field.int(100).default(10_000),
    /** Retries: exponential backoff from this base (with jitter), capped, for this many attempts in all. */
    webhookRetryBaseMs: field.int(10).default(5_000),
    webhookRetryMaxMs: field.int(10).default(3_600_000),
    webhookMaxAttempts: field.int(1).default(10),
    /** How often the schedule loop reads schedules from SQL (edits through other masters, queued fire times). */
    scheduleSyncMs: field.int(100).default(5_000),
    /** A fire time older than this when first seen was missed; the schedule's misfire policy decides. */
    scheduleMisfireGraceMs: field.int(0).default(10_000),
    /** A fire time still `claimed` this long after its claim (its master died) is taken over by another. */
    scheduleClaimLeaseMs: field.int(1_000).default(60_000),
    /** The web dashboard at /ui/ and its live stream (docs/dashboard.md); off: the API only. */
    dashboard: field.bool().default(true),
    /** How often the dashboard's live stream reads SQL (one read per master, whoever watches). */
    dashboardIntervalMs: field.int(200).default(1_000),
    maxBodyBytes: field.int(1024).default(1024 * 1024),
    headersTimeoutMs: field.int(100).default(10_000),
    requestTimeoutMs: field.int(100).default(30_000),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((config, ctx) => {
    checkTlsPair(config, ctx);
    // Two heartbeats may be missed (a GC pause, a slow network) before an agent is called lost.
    if (config.agentHeartbeatMs * 3 > config.agentLostAfterMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['agentHeartbeatMs'],
        message: `must be at most a third of agentLostAfterMs (${config.agentLostAfterMs} ms), or every agent flaps between online and lost`,
      });
    }
    if (config.headersTimeoutMs > config.requestTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['headersTimeoutMs'],
        message: 'must not exceed requestTimeoutMs',
      });
    }
  });

export type MasterConfig = z.infer<typeof masterConfigSchema>;
