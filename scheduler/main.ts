import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { schedulerToken } from '../shared/config/cluster-token.js';
import { loadConfig } from '../shared/config/load.js';
import { writeFileAtomic } from '../shared/files/atomic-write.js';
import { AppError, ConfigError } from '../shared/errors.js';
import { createLogger } from '../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../shared/lifecycle/signals.js';
import { exitOnFault } from '../shared/lifecycle/faults.js';
import type { RoleIpcMessage } from '../shared/protocol/ipc.js';
import { normalizeUrl } from '../shared/url/normalize.js';
import { openBackend } from './backends/backend.js';
import { schedulerConfigSchema, type SchedulerConfig } from './config.js';
import { CrawlScheduler, type JobSettings } from './crawl-scheduler.js';
import { loadJob, saveJob } from './job-file.js';
import { isLoopbackAddress } from '../shared/http/request-guards.js';
import { SCHEDULER_FILE } from '../shared/protocol/why.js';

function tell(message: RoleIpcMessage): void {
  process.send?.(message);
}

function validate(config: SchedulerConfig): void {
  const problems: string[] = [];
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    problems.push(
      'headersTimeoutMs (ACKCRAWL_HEADERS_TIMEOUT_MS): must not exceed requestTimeoutMs (ACKCRAWL_REQUEST_TIMEOUT_MS)',
    );
  }
  for (const seed of config.seeds) {
    try {
      normalizeUrl(seed);
    } catch (err) {
      problems.push(`seeds: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

function jobFromConfig(config: SchedulerConfig): JobSettings {
  return {
    seeds: config.seeds.map((seed) => normalizeUrl(seed)),
    scope: config.scope,
    maxPages: config.maxPages,
    maxDepth: config.maxDepth,
    hostConcurrency: config.hostConcurrency,
    hostDelayMs: config.hostDelayMs,
    hostRules: config.hostRules,
    adaptiveDelay: config.adaptiveDelay,
    maxCrawlDelayMs: config.maxCrawlDelayMs,
    maxCooldownMs: config.maxCooldownMs,
    retryDelayMs: config.retryDelayMs,
    maxAttempts: config.maxAttempts,
    render: config.render,
    renderHosts: [...config.renderHosts],
    respectRobots: config.respectRobots,
    sitemaps: config.sitemaps,
    sitemapMaxDepth: config.sitemapMaxDepth,
    fetch: {
      userAgent: config.userAgent,
      connectTimeoutMs: config.connectTimeoutMs,
      responseTimeoutMs: config.responseTimeoutMs,
      totalTimeoutMs: config.totalTimeoutMs,
      maxRedirects: config.maxRedirects,
      maxBodyBytes: config.maxBodyBytes,
      allowPrivate: config.allowPrivate,
      maxUrlLength: config.maxUrlLength,
      maxLinksPerPage: config.maxLinksPerPage,
      ...(config.defaultCharset ? { defaultCharset: config.defaultCharset } : {}),
      ...(config.userAgents.length > 0 ? { userAgents: config.userAgents } : {}),
      ...(config.proxies.length > 0 ? { proxies: config.proxies } : {}),
      // Also without proxies here: a crawl submitted later may bring some.
      proxyMaxFailures: config.proxyMaxFailures,
      proxyCooloffMs: config.proxyCooloffMs,
      allowAddresses: config.allowAddresses,
      sitemapMaxUrls: config.sitemapMaxUrls,
      sitemapMaxBytes: config.sitemapMaxBytes,
    },
  };
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
  const backend = await openBackend(config, logger);
  const jobPath = join(config.frontier === 'sqlite' ? config.outDir : config.dataDir, 'job.json');
  // Seeds in the configuration define the crawl; without them, the crawl submitted last (if any).
  // A job file from an older version lacks newer settings: the configuration's values fill them.
  const job =
    config.seeds.length > 0 ? jobFromConfig(config) : { ...jobFromConfig(config), ...loadJob(jobPath) };
  const scheduler = new CrawlScheduler({
    settings: {
      listenHost: config.listenHost,
      listenPort: config.listenPort,
      token,
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
      output: backend.output,
    },
    frontier: backend.frontier,
    sink: backend.sink,
    logger,
    saveJob: (submitted) => saveJob(jobPath, submitted),
    onProgress: (progress) => tell({ type: 'progress', progress: { ...progress } }),
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
      await scheduler.close();
      await backend.close();
    })());
  // The crawlers' drain, then time for their outcomes to become durable and for the backend to close.
  onShutdownSignal(logger, shutdown, config.drainTimeoutMs + 15_000);
  const url = await scheduler.start();
  logger.info({ url, output: backend.output }, 'scheduler listening');
  if (!isLoopbackAddress(config.listenHost)) {
    logger.warn(
      { listenHost: config.listenHost },
      'listening beyond loopback: the token and proxy credentials cross the network in clear; keep this port on a private network or behind TLS',
    );
  }
  if (config.frontier === 'sqlite') announce(config.outDir, url, token);
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
