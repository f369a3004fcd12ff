import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrawlScheduler } from '../../scheduler/crawl-scheduler.js';
import type { RunFinished } from '../../scheduler/runs/run-host.js';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier, FrontierStats } from '../../shared/ports/frontier.js';
import { testJob, testSchedulerSettings } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'run-start-race-token-0123456789ab';
const RUN = 'run-raced';

/**
 * A tick reads each hosted run's counters while a run may still be starting (its seeds being
 * pushed). Here the interleaving is forced: the seeds' push waits until a tick has read the run's
 * counters (empty), and that read answers only after the push is done and the run is started.
 * Those counters are older than the start: the run must not be found finished ("accepted none of
 * its seeds") from them, as it was in CI with two runs at once.
 */
test('counters read while a run starts do not finish it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'run-start-race-'));
  const real = openSqliteFrontier({ path: join(dir, 'frontier.sqlite'), leaseMs: 60_000 });
  let staleRead: (() => void) | null = null;
  const staleReadBegan = new Promise<void>((resolve) => (staleRead = resolve));
  let pushDone: (() => void) | null = null;
  const pushed = new Promise<void>((resolve) => (pushDone = resolve));
  let readsAfterPush = 0;
  let pushCompleted = false;
  const frontier: Frontier = Object.create(real, {
    push: {
      value: async (...args: Parameters<Frontier['push']>) => {
        const [tasks] = args;
        if (!tasks.some((task) => task.runId === RUN)) return real.push(...args);
        await staleReadBegan;
        const accepted = await real.push(...args);
        pushCompleted = true;
        pushDone?.();
        return accepted;
      },
    },
    stats: {
      value: async (runId?: string): Promise<FrontierStats> => {
        if (runId !== RUN) return real.stats(runId);
        if (pushCompleted) {
          readsAfterPush += 1;
          return real.stats(runId);
        }
        const before = await real.stats(runId);
        staleRead?.();
        // Answered late: after the start has completed, as a slow read under load would be.
        await pushed;
        await new Promise((resolve) => setImmediate(resolve));
        return before;
      },
    },
  }) as Frontier;
  const sink = new FileSink({ dir });
  const finished: RunFinished[] = [];
  const scheduler = new CrawlScheduler({
    settings: testSchedulerSettings(testJob([], { allowPrivate: true }), TOKEN),
    frontier,
    sink,
    logger: silentLogger(),
  });
  scheduler.onRunFinished((f) => finished.push(f));
  t.after(async () => {
    await scheduler.close();
    await sink.close();
    await real.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await scheduler.start();
  await scheduler.startRun({
    runId: RUN,
    jobId: 'job-raced',
    settings: testJob(['http://127.0.0.1:9/'], { allowPrivate: true }),
  });
  assert.equal((await real.stats(RUN)).total, 1, 'the seed is in the frontier');
  // Two ticks that read the run's counters after its start: the stale read's tick is over by then.
  await waitFor(() => readsAfterPush >= 2, { timeoutMs: 5_000, message: 'two fresh reads of the run' });
  assert.deepEqual(finished, [], 'a run with its seed ready is not finished');
  const report = scheduler.reports().find((r) => r.runId === RUN);
  assert.equal(report?.state, 'active');
});
