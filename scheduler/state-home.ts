import type { SchedulerConfig } from './config.js';

/**
 * Where a scheduler keeps the files that go with its crawl state (the recrawl index, the runs'
 * sessions), as job.json: the SQLite frontier's folder, or the data dir.
 */
export function stateHomeOf(config: Pick<SchedulerConfig, 'dataDir' | 'outDir' | 'frontier'>): string {
  return config.frontier === 'sqlite' ? config.outDir : config.dataDir;
}
