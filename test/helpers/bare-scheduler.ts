import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import type { RunFinished } from '../../scheduler/runs/run-host.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import { testJob, testSchedulerSettings } from './test-job.js';

export interface BareScheduler {
  scheduler: CrawlScheduler;
  /** The SQLite frontier underneath the wrapped one the scheduler uses, for the test's own reads. */
  real: SqliteFrontier;
  /** Every run end the scheduler announced, in order. */
  finished: RunFinished[];
  /** Closes the scheduler, its sink and frontier, and removes the temp dir. */
  close: () => Promise<void>;
}

/**
 * A CrawlScheduler with no run of its own (runs come by `startRun`), on a SQLite frontier and a
 * file sink in a temp dir. `wrap` replaces some of the frontier's methods (each given the real
 * frontier), so a test can count or hold back the scheduler's calls. Not started: the test calls
 * `scheduler.start()`.
 */
export function bareScheduler(
  token: string,
  wrap: (real: SqliteFrontier) => Partial<Frontier> = () => ({}),
): BareScheduler {
  const dir = mkdtempSync(join(tmpdir(), 'bare-scheduler-'));
  const real = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
  const overrides = Object.fromEntries(
    Object.entries(wrap(real)).map(([name, value]) => [name, { value }]),
  ) as PropertyDescriptorMap;
  const frontier = Object.create(real, overrides) as Frontier;
  const sink = new FileSink({ dir });
  const finished: RunFinished[] = [];
  const scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(testJob([], { allowPrivate: true }), token),
    frontier,
    sink,
    logger: silentLogger(),
  });
  scheduler.onRunFinished((f) => finished.push(f));
  return {
    scheduler,
    real,
    finished,
    close: async () => {
      await scheduler.close();
      await sink.close();
      await real.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
