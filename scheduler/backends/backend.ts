import type { Logger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { PageSink } from '../../shared/ports/page-sink.js';
import type { SchedulerConfig } from '../config.js';
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

export async function openBackend(config: SchedulerConfig, logger: Logger): Promise<Backend> {
  const opened = await openSink(config, logger);
  const frontier = await openFrontier(config, logger);
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
