import type { Logger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { SeenRepository } from '../../shared/ports/sql-store.js';
import type { PageSink } from '../../shared/ports/page-sink.js';
import type { SchedulerConfig } from '../config.js';
import type { PublishTimer } from '../../shared/metrics/publish-latency.js';
import { openFrontier } from './frontiers.js';
import { openSink } from './sinks.js';

/** The frontier and page sink a scheduler runs on, chosen by configuration. */
export interface Backend {
  frontier: Frontier;
  sink: PageSink;
  /** Where records go, for status reports. */
  output: string;
  close(): Promise<void>;
}

/** Timers of the brokers' publishes (shared/metrics/publish-latency.ts); absent: not timed. */
export interface BackendTimers {
  kafka: PublishTimer;
  rabbitmq: PublishTimer;
}

/**
 * `sharedSeen`: the SQL store's seen-set, which the RabbitMQ frontier shares with the other
 * schedulers of its prefix when hosts are split among them.
 */
export async function openBackend(
  config: SchedulerConfig,
  logger: Logger,
  timers?: BackendTimers,
  sharedSeen?: SeenRepository,
): Promise<Backend> {
  const opened = await openSink(config, logger, timers?.kafka);
  const frontier = await openFrontier(config, logger, timers?.rabbitmq, sharedSeen);
  return {
    frontier,
    sink: opened.sink,
    output: opened.output,
    close: async () => {
      await opened.close();
      await frontier.close();
    },
  };
}
