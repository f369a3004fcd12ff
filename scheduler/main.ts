import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { schedulerToken } from '../shared/config/cluster-token.js';
import { loadConfig } from '../shared/config/load.js';
import { listensInClear, readTlsServerOptions } from '../shared/config/tls.js';
import { writeFileAtomic } from '../shared/files/atomic-write.js';
import { AppError, ConfigError } from '../shared/errors.js';
import { createLogger, type Logger } from '../shared/logger.js';
import type { Frontier } from '../shared/ports/frontier.js';
import { isEntryPoint, onShutdownSignal } from '../shared/lifecycle/signals.js';
import { exitOnFault } from '../shared/lifecycle/faults.js';
import type { RoleIpcMessage } from '../shared/protocol/ipc.js';
import { CRAWL_SETTING_KEYS, type CrawlSettings } from '../shared/crawl-settings/index.js';
import { openBackend } from './backends/backend.js';
import { schedulerConfigSchema, type SchedulerConfig } from './config.js';
import { CrawlScheduler } from './crawl-scheduler.js';
import { loadJob, saveJob } from './job-file.js';
import { SCHEDULER_FILE } from '../shared/protocol/why.js';
import { openControlPlane } from './runs/control-plane.js';
import { openRecrawlIndex } from './recrawl/open-index.js';
import { SESSION_STORE_FILE, SessionStore } from './runs/session-store.js';
import { stateHomeOf } from './state-home.js';
import { createMetricsRegistry } from '../shared/metrics/registry.js';
import { createPublishTimers } from '../shared/metrics/publish-latency.js';
import { createSchedulerMetrics } from './metrics/scheduler-metrics.js';

function tell(message: RoleIpcMessage): void {
  process.send?.(message);
}

/** The frontier's counters once every outcome is settled, for the process that started this one. */
async function tellStopped(frontier: Frontier, logger: Logger): Promise<void> {
  try {
    tell({ type: 'stopped', stats: { ...(await frontier.stats()) } });
  } catch (err) {
    logger.warn({ err }, 'frontier counters not read at stop');
  }
}

function validate(config: SchedulerConfig): void {
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError([
      'headersTimeoutMs (ACKCRAWL_HEADERS_TIMEOUT_MS): must not exceed requestTimeoutMs (ACKCRAWL_REQUEST_TIMEOUT_MS)',
    ]);
  }
}

/** The crawl's part of the configuration (its seeds may be empty: the crawl comes later). */
function crawlSettingsOf(config: SchedulerConfig): CrawlSettings {
  return Object.fromEntries(CRAWL_SETTING_KEYS.map((key) => [key, config[key]])) as CrawlSettings;
}

/** Tells local tools where this scheduler's API is; owner-only, since it holds the token. */
function announce(outDir: string, wsUrl: string, token: string): void {
  const api = wsUrl.replace(/^ws:/, 'http:').replace(/\/crawlers$/, '');
  writeFileAtomic(join(outDir, SCHEDULER_FILE), JSON.stringify({ api, pid: process.pid, token }), {
    mode: 0o600,
  });
}

/** Composition root of the scheduler role: config, frontier and sink, WebSocket endpoint and API. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(schedulerConfigSchema, env);
  validate(config);
  const logger = createLogger({ name: 'scheduler', level: config.logLevel });
  exitOnFault(logger);
  // No scheduler runs without credentials: the configured token, or the one kept in the data dir.
  const { token, source, path: tokenFile } = schedulerToken(config.token, config.dataDir);
  if (source !== 'config') {
    logger.info(
      { tokenFile, created: source === 'created' },
      'no ACKCRAWL_TOKEN: crawlers, agents and the CLI on this machine read the token from the token file',
    );
  }
  mkdirSync(config.outDir, { recursive: true });
  // The runs in SQL, unless this is `ackcrawl crawl`'s one configured crawl.
  const plane =
    (config.serveRuns ?? config.seeds.length === 0) ? await openControlPlane(config, logger) : null;
  // One registry for the process, served at GET /metrics with the scheduler's token.
  const registry = createMetricsRegistry();
  // Hosts split among schedulers: they share the seen-set in SQL, which is shared only if they
  // share the store (the master's ACKCRAWL_SQL_URL), not each one's SQLite file.
  const sharedSeen = config.shards > 1 ? plane?.store.seen : undefined;
  if (sharedSeen && config.sqlUrl === undefined) {
    logger.warn(
      { shards: config.shards, dataDir: config.dataDir },
      'ACKCRAWL_SHARDS without ACKCRAWL_SQL_URL: the seen-set lives in this data dir only; schedulers with other data dirs will fetch URLs found through both twice. Give every scheduler of the prefix the same ACKCRAWL_SQL_URL',
    );
  }
  const backend = await openBackend(config, logger, createPublishTimers(registry), sharedSeen).catch(
    async (err: unknown) => {
      await plane?.close();
      throw err;
    },
  );
  const jobPath = join(config.frontier === 'sqlite' ? config.outDir : config.dataDir, 'job.json');
  // Seeds in the configuration define the crawl; without them, the crawl submitted last (if any).
  // A job file from an older version lacks newer settings: the configuration's values fill them.
  const configured = crawlSettingsOf(config);
  if (configured.maxDurationMs > 0) {
    logger.warn(
      { maxDurationMs: configured.maxDurationMs },
      "ACKCRAWL_MAX_DURATION_MS is not applied to a scheduler's own crawl: the master ends its runs at their limit, and `ackcrawl crawl` its embedded crawl",
    );
  }
  const job = config.seeds.length > 0 ? configured : (loadJob(jobPath, configured) ?? configured);
  const recrawl = openRecrawlIndex(config, logger);
  const sessions = new SessionStore(join(stateHomeOf(config), SESSION_STORE_FILE));
  const scheduler = new CrawlScheduler({
    settings: {
      listenHost: config.listenHost,
      listenPort: config.listenPort,
      ...(config.listenFd !== undefined ? { listenFd: config.listenFd } : {}),
      token,
      tls: readTlsServerOptions(config),
      endpoint: {
        allowedHosts: config.allowedHosts,
        maxConnections: config.maxConnections,
        maxConnectionsPerAddress: config.maxConnectionsPerAddress,
        helloTimeoutMs: config.helloTimeoutMs,
        maxSessionCredit: config.maxSessionCredit,
        headersTimeoutMs: config.headersTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
      },
      leaseMs: config.leaseMs,
      heartbeatMs: config.heartbeatMs,
      bufferSize: config.bufferSize,
      settler: {
        maxBacklogBytes: config.outcomeBacklogBytes,
        maxBatchBytes: config.sinkBatchBytes,
        stallLogIntervalMs: config.stallLogIntervalMs,
      },
      drainTimeoutMs: config.drainTimeoutMs,
      robots: {
        ttlMs: config.robotsTtlMs,
        retryMs: config.robotsRetryMs,
        retryMaxMs: config.robotsRetryMaxMs,
        maxHosts: config.robotsCacheHosts,
        maxBytes: config.robotsCacheBytes,
      },
      job,
      base: configured,
      output: backend.output,
    },
    frontier: backend.frontier,
    sink: backend.sink,
    logger,
    metrics: { registry, series: createSchedulerMetrics(registry) },
    saveJob: (submitted) => saveJob(jobPath, submitted),
    onProgress: (progress) => tell({ type: 'progress', progress: { ...progress } }),
    ...(plane ? { onFailure: plane.logFailure } : {}),
    ...(recrawl ? { recrawl } : {}),
    sessions,
    onDone: (summary) => {
      logger.info(summary, 'crawl complete');
      tell({ type: 'done', summary: { ...summary } });
      if (config.exitWhenDone) {
        shutdown().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      }
    },
  });
  let stopping: Promise<void> | null = null;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      if (config.frontier === 'sqlite') rmSync(join(config.outDir, SCHEDULER_FILE), { force: true });
      // Nothing new is started on a closing scheduler; its runs stay open in SQL for the next one.
      await plane?.stopServing();
      await scheduler.close();
      if (process.send) await tellStopped(backend.frontier, logger);
      recrawl?.close();
      sessions.close();
      await backend.close();
      await plane?.close();
    })());
  // The crawlers' drain, then time for their outcomes to become durable and for the backend to close.
  onShutdownSignal(logger, shutdown, config.drainTimeoutMs + 15_000);
  const url = await scheduler.start();
  logger.info({ url, output: backend.output }, 'scheduler listening');
  if (listensInClear(config.listenHost, config)) {
    logger.warn(
      { listenHost: config.listenHost },
      'listening beyond loopback: the token and proxy credentials cross the network in clear; set ACKCRAWL_TLS_CERT and ACKCRAWL_TLS_KEY or keep this port on a private network',
    );
  }
  if (config.frontier === 'sqlite') announce(config.outDir, url, token);
  if (plane) {
    await plane.serve(scheduler, backend.frontier);
    logger.info({ schedulerId: plane.schedulerId }, 'serving the runs in SQL');
  }
  tell({ type: 'listening', url });
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    const code = err instanceof AppError ? err.code : 'SCHEDULER_FAILED';
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`ackcrawl scheduler: ${message}\n`);
    tell({ type: 'fatal', code, message });
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
