import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Frontier, FrontierStats } from '../../shared/ports/frontier.js';
import { bareScheduler } from '../helpers/bare-scheduler.js';
import { testJob } from '../helpers/test-job.js';
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
  let staleRead: (() => void) | null = null;
  const staleReadBegan = new Promise<void>((resolve) => (staleRead = resolve));
  let pushDone: (() => void) | null = null;
  const pushed = new Promise<void>((resolve) => (pushDone = resolve));
  let readsAfterPush = 0;
  let pushCompleted = false;
  const { scheduler, real, finished, close } = bareScheduler(TOKEN, (real) => ({
    push: async (...args: Parameters<Frontier['push']>) => {
      const [tasks] = args;
      if (!tasks.some((task) => task.runId === RUN)) return real.push(...args);
      await staleReadBegan;
      const accepted = await real.push(...args);
      pushCompleted = true;
      pushDone?.();
      return accepted;
    },
    stats: async (runId?: string): Promise<FrontierStats> => {
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
  }));
  t.after(close);
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
