import { clientToken } from '../../shared/config/cluster-token.js';
import { loadConfig } from '../../shared/config/load.js';
import { readTlsCa } from '../../shared/config/tls.js';
import { outcomeFrameLimit } from '../../shared/protocol/frame-limits.js';
import { chromiumProblem } from '../../shared/config/chromium.js';
import { AppError, ConfigError } from '../../shared/errors.js';
import { RENDER_CAPABILITY } from '../../shared/protocol/render-rules.js';
import { createLogger } from '../../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../../shared/lifecycle/signals.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import { AgentStats } from './agent-stats.js';
import { failureOutcome } from './page/failure-outcome.js';
import { fetchRobots, robotsFailure } from './robots/fetch-robots.js';
import { crawlerConfigSchema, type CrawlerConfig } from './config.js';
import type { Logger } from '../../shared/logger.js';
import type { Renderer } from './render/renderer.js';
import { renderSettings } from './render/render-budget.js';
import type { FetchedPage } from './fetch/fetcher.js';
import { createFetcherFactory } from './fetch/fetcher-factory.js';
import { DEFAULT_SITEMAP_LIMITS, processTask } from './page/process-task.js';
import { SchedulerClient } from './scheduler-client.js';
import { concurrencyShares } from './scheduler-shares.js';

/** Composition root of one crawler process. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(crawlerConfigSchema, env);
  const token = clientToken(config.token, config.dataDir);
  const chromium = config.canRender ? chromiumProblem(config.chromiumPath) : null;
  if (chromium) throw new ConfigError([`canRender (ACKCRAWL_CAN_RENDER): ${chromium}`]);
  const logger = createLogger({ name: 'crawler', level: config.logLevel }).child({
    crawlerId: config.crawlerId,
  });
  exitOnFault(logger);
  const fetcherFor = createFetcherFactory({ maxSockets: config.concurrency * 2, logger });
  const renderer = config.canRender ? await createRenderer(config, logger) : null;
  const stats = new AgentStats();
  // A render crawler takes no more tasks than it can render at once: a task must not wait for a
  // browser page longer than the scheduler waits for its outcome.
  const concurrency = renderer ? Math.min(config.concurrency, config.renderConcurrency) : config.concurrency;
  const shares = concurrencyShares(concurrency, config.schedulerUrl.length);
  const clients = config.schedulerUrl.map(
    (url, i) =>
      new SchedulerClient({
        url,
        token,
        ca: readTlsCa(config),
        crawlerId: config.crawlerId,
        concurrency: shares[i] as number,
        ...(renderer ? { capabilities: [RENDER_CAPABILITY] } : {}),
        logger: config.schedulerUrl.length > 1 ? logger.child({ scheduler: url }) : logger,
        work: (task, settings, started, signal, hop) =>
          stats.track<Buffer | string>(() =>
            task.kind === 'robots'
              ? fetchRobots(task, fetcherFor(settings), signal)
              : processTask(task, {
                  signal,
                  onFailure: () => stats.failed(),
                  fetcher: fetcherFor(settings),
                  crawlerId: config.crawlerId,
                  maxFrameBytes: outcomeFrameLimit(settings),
                  linkLimits: {
                    maxUrlLength: settings.maxUrlLength,
                    maxLinksPerPage: settings.maxLinksPerPage,
                  },
                  defaultCharset: settings.defaultCharset,
                  sitemap: {
                    maxUrls: settings.sitemapMaxUrls ?? DEFAULT_SITEMAP_LIMITS.maxUrls,
                    maxBytes: settings.sitemapMaxBytes ?? DEFAULT_SITEMAP_LIMITS.maxBytes,
                  },
                  // Spreads last: on Node 20 a property written after a spread goes through V8's runtime.
                  ...(renderer
                    ? {
                        render: (
                          url: string,
                          signal?: AbortSignal,
                          document?: FetchedPage,
                          spentMs?: number,
                        ) => renderer.render(url, renderSettings(settings, spentMs), signal, document),
                      }
                    : {}),
                  ...(task.reportStart ? { onRequestSent: started } : {}),
                  ...(task.hopGrants ? { awaitHop: hop } : {}),
                }),
          ),
        failed: (task, err) => {
          stats.failed();
          return task.kind === 'robots'
            ? robotsFailure(task, err)
            : failureOutcome(task, err, config.crawlerId);
        },
        onFatal: (code, message) => {
          logger.fatal({ code, message }, 'refused by the scheduler; exiting');
          process.exit(3);
        },
      }),
  );
  const close = async (): Promise<void> => {
    await Promise.all(clients.map((client) => client.close(config.drainTimeoutMs)));
    stats.close();
    await renderer?.close();
  };
  // The drain's own deadline, then up to 2 s to say bye and close, and the browser's close.
  onShutdownSignal(logger, close, config.drainTimeoutMs + 5_000);
  // An orphaned crawler (its agent died by kill -9) stops instead of crawling unsupervised. The
  // spawner names itself: a crawler whose agent died between the spawn and this line starts an
  // orphan (its parent already init), and a CI run hung on one that crawled on for good.
  const parent = Number(process.env.ACKCRAWL_SUPERVISOR_PID) || process.ppid;
  const orphaned = (): boolean => process.ppid !== parent;
  if (orphaned()) {
    logger.warn(
      { expectedParent: parent, parent: process.ppid },
      'agent gone before this crawler started; stopping',
    );
    process.exit(0);
  }
  const watchdog = setInterval(() => {
    if (!orphaned()) return;
    clearInterval(watchdog);
    logger.warn({ expectedParent: parent, parent: process.ppid }, 'agent gone; stopping');
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  }, 1000).unref();
  for (const client of clients) client.start();
  stats.start();
}

/** Loaded only in render crawlers: a static crawler never loads playwright-core. */
async function createRenderer(config: CrawlerConfig, logger: Logger): Promise<Renderer> {
  const [{ Renderer }, { BrowserHost, chromiumLauncher }] = await Promise.all([
    import('./render/renderer.js'),
    import('./render/browser-host.js'),
  ]);
  const log = logger.child({ module: 'renderer' });
  return new Renderer({
    host: new BrowserHost(chromiumLauncher(config.chromiumPath), log),
    logger: log,
    concurrency: config.renderConcurrency,
    idleTimeoutMs: config.renderIdleTimeoutMs,
  });
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`ackcrawl crawler: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : err instanceof AppError ? 1 : 1);
  });
}
