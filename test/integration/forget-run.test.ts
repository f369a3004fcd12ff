import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { encodeOutcomeFrame } from '../../shared/protocol/outcome-frame.js';
import { bareScheduler, type BareScheduler } from '../helpers/bare-scheduler.js';
import { okOutcome, pageRecord, RawClient } from '../helpers/raw-crawler.js';
import { testJob } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'forget-run-token-0123456789abcdef';

/** A connected raw crawler on `bare`'s scheduler, closed (with the scheduler) after the test. */
async function connect(t: TestContext, bare: BareScheduler): Promise<RawClient> {
  const client = await RawClient.connect(await bare.scheduler.start(), { token: TOKEN });
  t.after(async () => {
    await client.close();
    await bare.close();
  });
  await client.hello();
  return client;
}

/** Starts run `runId` of one seed on host `host`. */
const startRun = (bare: BareScheduler, runId: string, host: string): Promise<void> =>
  bare.scheduler.startRun({
    runId,
    jobId: 'job',
    settings: testJob([`http://${host}/`], { allowPrivate: true }),
  });

/**
 * A run whose end is recorded is let go by its scheduler (RunSync calls forgetRun): its counters
 * are no longer read at every tick and it leaves the reports. Before, every run a scheduler had
 * ever hosted stayed: a scheduler of a schedule firing every minute read the counters of
 * thousands of ended runs four times a second. A run that is not finished is never let go.
 */
test('a finished run is let go: no more counter reads, no report; an active one is kept', async (t) => {
  const reads = new Map<string, number>();
  const bare = bareScheduler(TOKEN, (real) => ({
    stats: (runId?: string) => {
      if (runId !== undefined) reads.set(runId, (reads.get(runId) ?? 0) + 1);
      return real.stats(runId);
    },
  }));
  const { scheduler, finished } = bare;
  const client = await connect(t, bare);
  await startRun(bare, 'done-run', 'a.test');
  client.credit(1);
  await waitFor(() => client.tasks().length === 1, { timeoutMs: 5_000, message: 'the seed sent' });
  const [task] = client.tasks();
  assert.ok(task);
  await startRun(bare, 'busy-run', 'b.test');
  assert.equal(scheduler.forgetRun('done-run'), false, 'a run with its page in flight is kept');

  client.binary(encodeOutcomeFrame(okOutcome(task.taskId), pageRecord(task)));
  await waitFor(() => finished.some((f) => f.runId === 'done-run'), {
    timeoutMs: 5_000,
    message: 'the run finished',
  });
  assert.equal(scheduler.forgetRun('busy-run'), false, 'a run with work left is kept');
  assert.equal(scheduler.forgetRun('done-run'), true);
  assert.equal(scheduler.forgetRun('done-run'), false, 'once');
  assert.deepEqual(
    scheduler.reports().map((r) => r.runId),
    ['busy-run'],
  );
  const readsWhenLetGo = reads.get('done-run') ?? 0;
  const busyReads = reads.get('busy-run') ?? 0;
  await waitFor(() => (reads.get('busy-run') ?? 0) >= busyReads + 3, {
    timeoutMs: 5_000,
    message: 'three more ticks read the other run',
  });
  assert.equal(reads.get('done-run'), readsWhenLetGo, 'the run let go is not read any more');
});

/**
 * A cancelled run is let go too once SQL holds it cancelled (RunSync forgets it right after the
 * cancel): before, every run ever cancelled stayed in its scheduler's reports and sync until a
 * restart. Its page still in flight is settled when its outcome comes, without following links.
 */
test('a cancelled run is let go; the outcome of its page in flight is still settled, its links not followed', async (t) => {
  const bare = bareScheduler(TOKEN);
  const { scheduler, real } = bare;
  const client = await connect(t, bare);
  await startRun(bare, 'gone-run', 'c.test');
  await startRun(bare, 'kept-run', 'd.test');
  client.credit(2);
  await waitFor(() => client.tasks().length === 2, { timeoutMs: 5_000, message: 'both seeds sent' });
  const task = client.tasks().find((x) => x.runId === 'gone-run');
  assert.ok(task);
  assert.equal(scheduler.forgetRun('gone-run'), false, 'an active run is kept');

  await scheduler.cancelRun('gone-run');
  assert.equal(scheduler.forgetRun('gone-run'), true);
  assert.deepEqual(
    scheduler.reports().map((r) => r.runId),
    ['kept-run'],
  );

  client.binary(encodeOutcomeFrame(okOutcome(task.taskId, ['http://c.test/next']), pageRecord(task)));
  await waitFor(async () => (await real.stats('gone-run')).done === 1, {
    timeoutMs: 5_000,
    message: 'the late outcome settled',
  });
  const stats = await real.stats('gone-run');
  assert.equal(stats.total, 1, 'its link was not followed');
  assert.equal(stats.leased, 0);
});
