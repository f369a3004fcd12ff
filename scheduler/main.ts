import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../shared/config/load.js';
import { AppError, ConfigError } from '../shared/errors.js';
import { createLogger } from '../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../shared/lifecycle/signals.js';
import type { RoleIpcMessage } from '../shared/protocol/ipc.js';
import { normalizeUrl } from '../shared/url/normalize.js';
import { createScope } from '../shared/url/scope.js';
import { hostKey } from './outcomes/link-filter.js';
import { openSqliteFrontier } from '../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../shared/adapters/page-sink/file-sink.js';
import { schedulerConfigSchema, type SchedulerConfig } from './config.js';
import { CrawlScheduler } from './crawl-scheduler.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function tell(message: RoleIpcMessage): void {
  process.send?.(message);
}

function validate(config: SchedulerConfig): void {
  const problems: string[] = [];
  if (!LOOPBACK.has(config.listenHost) && config.token === undefined) {
    problems.push(`token (ACKCRAWL_TOKEN): required when listening on ${config.listenHost}, beyond loopback`);
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

/** Composition root of the scheduler role: config, frontier, sink, WebSocket endpoint. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(schedulerConfigSchema, env);
  validate(config);
  const logger = createLogger({ name: 'scheduler', level: config.logLevel });
  mkdirSync(config.outDir, { recursive: true });
  // Commits need not wait for the disk: the record files are fdatasynced before each settle, and a
  // settle lost to a power cut is replayed from them at start (FileSink.recover), links included.
  const frontier = openSqliteFrontier({
    path: join(config.outDir, 'frontier.sqlite'),
    leaseMs: config.leaseMs,
    durability: 'normal',
  });
  // The embedded frontier has one consumer, this scheduler: leases of an earlier run are dead.
  const released = frontier.releaseAllLeases();
  if (released > 0) logger.info({ released }, 'resuming: leases of the previous run handed back');
  const sink = new FileSink({
    dir: config.outDir,
    gzip: config.gzip,
    segmentBytes: config.segmentBytes,
    onError: (err, path) =>
      logger.error({ err, path }, 'could not compress a record file; it stays uncompressed'),
  });
  const seeds = config.seeds.map((seed) => {
    const url = normalizeUrl(seed);
    return { url, host: hostKey(url) ?? '', depth: 0, priority: 0, parentUrl: null };
  });
  const scheduler = new CrawlScheduler({
    settings: {
      listenHost: config.listenHost,
      listenPort: config.listenPort,
      token: config.token,
      seeds,
      maxPages: config.maxPages,
      maxDepth: config.maxDepth,
      hostConcurrency: config.hostConcurrency,
      hostDelayMs: config.hostDelayMs,
      retryDelayMs: config.retryDelayMs,
      maxAttempts: config.maxAttempts,
      leaseMs: config.leaseMs,
      heartbeatMs: config.heartbeatMs,
      bufferSize: config.bufferSize,
      fetch: {
        userAgent: config.userAgent,
        connectTimeoutMs: config.connectTimeoutMs,
        responseTimeoutMs: config.responseTimeoutMs,
        totalTimeoutMs: config.totalTimeoutMs,
        maxRedirects: config.maxRedirects,
        maxBodyBytes: config.maxBodyBytes,
        allowPrivate: config.allowPrivate,
      },
    },
    frontier,
    sink,
    logger,
    inScope: createScope(
      config.scope,
      seeds.map((s) => s.url),
    ),
    onProgress: (progress) => tell({ type: 'progress', progress: { ...progress } }),
    onDone: (summary) => {
      logger.info(summary, 'crawl complete');
      tell({ type: 'done', summary: { ...summary } });
      if (config.exitWhenDone) void shutdown().then(() => process.exit(0));
    },
  });
  let stopping: Promise<void> | null = null;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      await scheduler.close();
      await sink.close();
      await frontier.close();
    })());
  onShutdownSignal(logger, shutdown);
  const url = await scheduler.start();
  logger.info({ url, outDir: config.outDir }, 'scheduler listening');
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
