import { loadConfig } from '../../shared/config/load.js';
import { AppError, ConfigError } from '../../shared/errors.js';
import { createLogger } from '../../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../../shared/lifecycle/signals.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { crawlerConfigSchema } from './config.js';
import { createAgents } from './fetch/agents.js';
import { Fetcher } from './fetch/fetcher.js';
import { processTask } from './page/process-task.js';
import { SchedulerClient } from './scheduler-client.js';

/** Composition root of one crawler process. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(crawlerConfigSchema, env);
  const logger = createLogger({ name: 'crawler', level: config.logLevel }).child({
    crawlerId: config.crawlerId,
  });
  let fetcher: { settings: string; fetcher: Fetcher } | null = null;
  const fetcherFor = (settings: FetchSettings): Fetcher => {
    const key = JSON.stringify(settings);
    if (fetcher?.settings !== key) {
      const agents = createAgents({
        allowPrivate: settings.allowPrivate,
        maxSockets: config.concurrency * 2,
      });
      fetcher = { settings: key, fetcher: new Fetcher(settings, agents) };
    }
    return fetcher.fetcher;
  };
  const client = new SchedulerClient({
    url: config.schedulerUrl,
    token: config.token,
    crawlerId: config.crawlerId,
    concurrency: config.concurrency,
    logger,
    work: (task, settings) =>
      processTask(task, { fetcher: fetcherFor(settings), crawlerId: config.crawlerId }),
    onFatal: (code, message) => {
      logger.fatal({ code, message }, 'refused by the scheduler; exiting');
      process.exit(3);
    },
  });
  onShutdownSignal(logger, () => client.close());
  // An orphaned crawler (its agent died by kill -9) stops instead of crawling unsupervised.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) {
      logger.warn('agent gone; stopping');
      void client.close().then(() => process.exit(0));
    }
  }, 1000).unref();
  client.start();
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`ackcrawl crawler: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : err instanceof AppError ? 1 : 1);
  });
}
