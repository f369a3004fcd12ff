import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunSync } from '../../scheduler/runs/run-sync.js';
import type { RunFinished, RunHost, RunReport, RunSpec } from '../../scheduler/runs/run-host.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { createLocalRunControl } from '../../shared/adapters/run-control/local-run-control.js';
import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunControl } from '../../shared/ports/run-control.js';
import type { RunCounters, RunRow, RunStall, RunState, SqlStore } from '../../shared/ports/sql-store.js';
import { testJob } from '../helpers/test-job.js';
import { waitFor } from '../helpers/wait-for.js';

const ZERO: RunCounters = { done: 0, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 };

/**
 * A host that keeps its runs as a scheduler's registry would (state per run) and records the
 * calls it got, so a test sees what the sync asked of it; `finish` plays a run coming to its end.
 */
class RecordingHost implements RunHost {
  readonly calls: string[] = [];
  readonly runs = new Map<string, RunReport & { settings: CrawlSettings }>();
  /** What stall() answers: set by a test to play outcomes that cannot be made durable. */
  stalled: RunStall | undefined = undefined;
  private listeners: ((finished: RunFinished) => void)[] = [];

  async startRun(spec: RunSpec): Promise<void> {
    this.calls.push(`start ${spec.runId}`);
    if (!this.runs.has(spec.runId))
      this.runs.set(spec.runId, {
        runId: spec.runId,
        jobId: spec.jobId,
        state: 'active',
        counters: { ...ZERO },
        settings: spec.settings,
      });
  }
  async requeue(runId: string, url: string): Promise<boolean | null> {
    this.calls.push(`requeue ${runId} ${url}`);
    return true;
  }
  async pauseRun(runId: string): Promise<void> {
    this.calls.push(`pause ${runId}`);
    this.set(runId, 'paused');
  }
  async resumeRun(runId: string): Promise<void> {
    this.calls.push(`resume ${runId}`);
    this.set(runId, 'active');
  }
  async cancelRun(runId: string): Promise<number> {
    this.calls.push(`cancel ${runId}`);
    this.set(runId, 'cancelled');
    return 0;
  }
  async updateRun(runId: string, settings: CrawlSettings): Promise<void> {
    this.calls.push(`update ${runId} maxPages=${settings.maxPages}`);
    const run = this.runs.get(runId);
    if (run) run.settings = settings;
  }
  forgetRun(runId: string): boolean {
    const state = this.runs.get(runId)?.state;
    if (state !== 'finished' && state !== 'cancelled') return false;
    this.calls.push(`forget ${runId}`);
    this.runs.delete(runId);
    return true;
  }
  reports(): RunReport[] {
    return [...this.runs.values()].map(({ runId, jobId, state, counters }) => ({
      runId,
      jobId,
      state,
      counters,
    }));
  }
  stall(): RunStall | undefined {
    return this.stalled;
  }
  onRunFinished(listener: (finished: RunFinished) => void): void {
    this.listeners.push(listener);
  }
  count(runId: string, counters: Partial<RunCounters>): void {
    const run = this.runs.get(runId);
    if (run) run.counters = { ...run.counters, ...counters };
  }
  finish(runId: string, outcome: 'succeeded' | 'failed' = 'succeeded', error: string | null = null): void {
    const run = this.runs.get(runId);
    assert.ok(run, `run ${runId} is hosted`);
    run.state = 'finished';
    for (const listener of this.listeners)
      listener({ runId, jobId: run.jobId, outcome, error, counters: run.counters });
  }
  private set(runId: string, state: RunReport['state']): void {
    const run = this.runs.get(runId);
    if (run) run.state = state;
  }
}

describe('RunSync against the SQLite store', () => {
  let dir: string;
  let store: SqlStore;
  let control: RunControl;
  const syncs: RunSync[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), `run-sync-${randomUUID()}-`));
    store = await openSqlStore(`sqlite:${join(dir, 'ackcrawl.db')}`);
    control = createLocalRunControl(silentLogger());
  });

  afterEach(async () => {
    for (const sync of syncs.splice(0)) await sync.close();
    await control.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startSync(
    host: RunHost,
    schedulerId = 'sched-a',
    syncIntervalMs = 60_000,
    frontier?: ConstructorParameters<typeof RunSync>[0]['frontier'],
  ): Promise<RunSync> {
    const sync = new RunSync({
      ...(frontier ? { frontier } : {}),
      store,
      control,
      host,
      schedulerId,
      logger: silentLogger(),
      syncIntervalMs,
      reportIntervalMs: 50,
    });
    syncs.push(sync);
    await sync.start();
    return sync;
  }

  async function createRun(
    state: RunState = 'queued',
    settings: unknown = { seeds: ['http://127.0.0.1:9/'] },
  ): Promise<RunRow> {
    const now = Date.now();
    await store.jobs
      .create({ id: 'job-1', name: 'job one', settings, createdAt: now, updatedAt: now })
      .catch(() => undefined);
    return store.runs.create({
      id: randomUUID(),
      jobId: 'job-1',
      state,
      settings,
      counters: ZERO,
      createdAt: now,
      startedAt: state === 'queued' ? null : now,
      endedAt: null,
      schedulerId: null,
      heartbeatAt: null,
      error: null,
      scheduledBy: null,
    });
  }

  const stored = async (id: string): Promise<RunRow> => {
    const row = await store.runs.get(id);
    assert.ok(row);
    return row;
  };

  test('a queued run is claimed (running, scheduler id, start time) and hosted with its parsed settings', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    await startSync(host);
    const row = await stored(run.id);
    assert.equal(row.state, 'running');
    assert.equal(row.schedulerId, 'sched-a');
    assert.ok(row.startedAt !== null);
    assert.deepEqual(host.calls, [`start ${run.id}`]);
    assert.equal(host.runs.get(run.id)?.settings.maxPages, 0, 'defaults applied by the settings schema');
  });

  test('pause, resume and cancel in SQL reach the host as soon as a command wakes the sync', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    await startSync(host);
    await store.runs.transition(run.id, ['running'], 'paused');
    await control.publish({ type: 'pause', runId: run.id });
    await waitFor(() => host.runs.get(run.id)?.state === 'paused', { message: 'paused on the host' });
    await store.runs.transition(run.id, ['paused'], 'running');
    await control.publish({ type: 'resume', runId: run.id });
    await waitFor(() => host.runs.get(run.id)?.state === 'active', { message: 'resumed on the host' });
    await store.runs.transition(run.id, ['running'], 'cancelled', { endedAt: Date.now() });
    await control.publish({ type: 'cancel', runId: run.id });
    await waitFor(() => host.calls.includes(`cancel ${run.id}`), { message: 'cancelled on the host' });
    // Cancelled in SQL for good: the host lets it go at once.
    await waitFor(() => !host.runs.has(run.id), { message: 'let go by the host' });
    assert.deepEqual(host.calls, [
      `start ${run.id}`,
      `pause ${run.id}`,
      `resume ${run.id}`,
      `cancel ${run.id}`,
      `forget ${run.id}`,
    ]);
    assert.equal((await stored(run.id)).state, 'cancelled');
  });

  test('without any command, the periodic sync follows SQL (a lost command costs only time)', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    await startSync(host, 'sched-a', 100);
    await store.runs.transition(run.id, ['running'], 'paused');
    await waitFor(() => host.runs.get(run.id)?.state === 'paused', { message: 'paused by polling' });
  });

  test('a paused run is hosted paused; new settings in SQL reach the host', async () => {
    const paused = await createRun('paused');
    const host = new RecordingHost();
    const sync = await startSync(host);
    assert.deepEqual(host.calls, [`start ${paused.id}`, `pause ${paused.id}`]);
    assert.equal((await stored(paused.id)).state, 'paused', 'the sync does not claim a paused run');
    host.calls.length = 0;
    await sync.wake();
    assert.deepEqual(host.calls, [], 'a run in line with SQL is left alone');
  });

  test('counters and heartbeat are reported for served runs, and stop when the scheduler stops', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    const sync = await startSync(host);
    host.count(run.id, { done: 7, queued: 3, inFlight: 2 });
    await waitFor(async () => (await stored(run.id)).counters.done === 7, { message: 'counters reported' });
    const first = (await stored(run.id)).heartbeatAt ?? 0;
    await waitFor(async () => ((await stored(run.id)).heartbeatAt ?? 0) > first, {
      message: 'heartbeat advances',
    });
    await sync.close();
    const last = (await stored(run.id)).heartbeatAt;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await stored(run.id)).heartbeatAt, last, 'a stopped scheduler no longer heartbeats');
  });

  test("the host's stall goes to SQL with the heartbeat, and goes once it is over", async () => {
    const run = await createRun();
    const host = new RecordingHost();
    await startSync(host);
    const stall = { since: Date.now() - 12_000, reason: 'outcomes cannot be made durable: SINK_DISK_FULL' };
    host.stalled = stall;
    await waitFor(async () => (await stored(run.id)).stall?.reason === stall.reason, {
      message: 'the stall reported',
    });
    assert.deepEqual((await stored(run.id)).stall, stall);
    host.stalled = undefined;
    await waitFor(async () => (await stored(run.id)).stall === undefined, { message: 'the stall cleared' });
  });

  test("the host's end of a run is recorded: succeeded with its counters, or failed with its error", async () => {
    const ok = await createRun();
    const bad = await createRun();
    const host = new RecordingHost();
    await startSync(host);
    host.count(ok.id, { done: 5 });
    host.finish(ok.id);
    host.finish(bad.id, 'failed', 'FRONTIER_IO: disk gone');
    await waitFor(async () => (await stored(ok.id)).state === 'succeeded', { message: 'succeeded' });
    await waitFor(async () => (await stored(bad.id)).state === 'failed', { message: 'failed' });
    const row = await stored(ok.id);
    assert.equal(row.counters.done, 5);
    assert.ok(row.endedAt !== null);
    assert.equal((await stored(bad.id)).error, 'FRONTIER_IO: disk gone');
    await waitFor(() => host.runs.size === 0, { message: 'both ends recorded: the host let both runs go' });
    assert.deepEqual(
      host.calls.filter((c) => c.startsWith('forget')).sort(),
      [`forget ${bad.id}`, `forget ${ok.id}`].sort(),
    );
  });

  test('a run SQL does not know (the single crawl submitted to this scheduler) is not let go', async () => {
    const host = new RecordingHost();
    await startSync(host);
    const asked: string[] = [];
    const get = store.runs.get.bind(store.runs);
    store.runs.get = async (id: string) => {
      const row = await get(id);
      asked.push(id);
      return row;
    };
    await host.startRun({ runId: 'default', jobId: 'default', settings: testJob(['http://a.test/']) });
    host.finish('default');
    // Polled from a timer: by then what followed the answer (a let-go, if any) has run.
    await waitFor(() => asked.includes('default'), { message: 'SQL asked about the run once it ended' });
    assert.ok(host.runs.has('default'), JSON.stringify(host.calls));
    assert.equal(host.calls.filter((c) => c.startsWith('forget')).length, 0);
  });

  test('a run is let go only once SQL holds its end, and only if the host finished it', async () => {
    const run = await createRun();
    const other = await createRun();
    const host = new RecordingHost();
    const sync = await startSync(host);
    await store.runs.transition(run.id, ['running'], 'paused');
    host.finish(run.id);
    await sync.wake();
    assert.ok(host.runs.has(run.id), 'its end is not in SQL yet (paused): still hosted');
    await store.runs.transition(run.id, ['paused'], 'running');
    await sync.wake();
    assert.equal((await stored(run.id)).state, 'succeeded');
    assert.equal(host.runs.has(run.id), false);
    assert.equal(host.runs.get(other.id)?.state, 'active', 'the other run is still hosted');
    await sync.wake();
    assert.equal(
      host.calls.filter((c) => c === `start ${run.id}`).length,
      1,
      'a run let go is not started again',
    );
  });

  test('a run that ends while paused keeps paused, and is recorded succeeded once resumed', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    const sync = await startSync(host);
    await store.runs.transition(run.id, ['running'], 'paused');
    host.finish(run.id);
    await sync.wake();
    assert.equal((await stored(run.id)).state, 'paused');
    await store.runs.transition(run.id, ['paused'], 'running');
    await sync.wake();
    assert.equal((await stored(run.id)).state, 'succeeded');
  });

  test('a cancelled run is never turned succeeded by its late end', async () => {
    const run = await createRun();
    const host = new RecordingHost();
    const sync = await startSync(host);
    await store.runs.transition(run.id, ['running'], 'cancelled', { endedAt: Date.now() });
    host.finish(run.id);
    await sync.wake();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await stored(run.id)).state, 'cancelled');
  });

  test('settings that do not parse fail the run, with the problems', async () => {
    const run = await createRun('queued', { seeds: ['not a url'] });
    const host = new RecordingHost();
    await startSync(host);
    const row = await stored(run.id);
    assert.equal(row.state, 'failed');
    assert.match(row.error ?? '', /settings are invalid/);
    assert.deepEqual(host.calls, []);
  });

  test('a restarted scheduler picks every open run up again', async () => {
    const running = await createRun();
    const paused = await createRun('paused');
    const first = await startSync(new RecordingHost());
    await first.close();
    const host = new RecordingHost();
    await startSync(host);
    assert.deepEqual(
      host.calls.sort(),
      [`pause ${paused.id}`, `start ${paused.id}`, `start ${running.id}`].sort(),
    );
    assert.equal((await stored(running.id)).state, 'running');
  });

  test('two schedulers on one store both serve a run, never fight over its state, and record its end once', async () => {
    const run = await createRun();
    const a = new RecordingHost();
    const b = new RecordingHost();
    await Promise.all([startSync(a, 'sched-a'), startSync(b, 'sched-b')]);
    assert.deepEqual(a.calls, [`start ${run.id}`]);
    assert.deepEqual(b.calls, [`start ${run.id}`]);
    const claimed = await stored(run.id);
    assert.equal(claimed.state, 'running');
    a.finish(run.id);
    b.finish(run.id);
    await waitFor(async () => (await stored(run.id)).state === 'succeeded', { message: 'succeeded' });
    const ended = (await stored(run.id)).endedAt;
    await Promise.all(syncs.map((sync) => sync.wake()));
    assert.equal((await stored(run.id)).endedAt, ended, 'the second end changed nothing');
    assert.equal(a.runs.size + b.runs.size, 0, 'both schedulers let the ended run go');
  });

  test('a run cancelled in SQL while no scheduler ran has its queued work removed from the frontier at start', async () => {
    const frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
    try {
      const cancelled = await createRun();
      const open = await createRun();
      const task = (runId: string, url: string) => ({
        runId,
        url,
        host: '127.0.0.1:9',
        depth: 0,
        priority: 0,
        parentUrl: null,
      });
      await frontier.push([
        task(cancelled.id, 'http://127.0.0.1:9/a'),
        task(open.id, 'http://127.0.0.1:9/b'),
        task('default', 'http://127.0.0.1:9/c'),
      ]);
      await store.runs.transition(cancelled.id, ['queued'], 'cancelled', { endedAt: Date.now() });
      await startSync(new RecordingHost(), 'sched-a', 60_000, frontier);
      const states = new Map((await frontier.runs()).map((r) => [r.runId, r.state]));
      assert.equal(states.has(cancelled.id), false, 'cancelled, then retired: out of runs()');
      assert.equal(states.get(open.id), 'active');
      assert.equal(states.get('default'), 'active', 'a run SQL does not know is left alone');
      const stats = await frontier.stats(cancelled.id);
      assert.deepEqual([stats.ready, stats.cancelled, stats.total], [0, 1, 1], 'its queued task cancelled');
    } finally {
      await frontier.close();
    }
  });
  test('a run that ended in SQL while this scheduler did not serve it is retired in the frontier at start', async () => {
    const succeeded = await createRun('running');
    const failed = await createRun('running');
    const open = await createRun('running');
    const cancelled = await createRun('running');
    // Cancelled there too, but not retired: the scheduler stopped between the two.
    const cancelledBoth = await createRun('running');
    await store.runs.transition(succeeded.id, ['running'], 'succeeded', { endedAt: Date.now() });
    await store.runs.transition(failed.id, ['running'], 'failed', { endedAt: Date.now(), error: 'x' });
    await store.runs.transition(cancelled.id, ['running'], 'cancelled', { endedAt: Date.now() });
    await store.runs.transition(cancelledBoth.id, ['running'], 'cancelled', { endedAt: Date.now() });
    const retired: string[] = [];
    const cancelledThere: string[] = [];
    const frontier = {
      runs: () =>
        Promise.resolve(
          [succeeded.id, failed.id, open.id, cancelled.id, cancelledBoth.id, 'default'].map((runId) => ({
            runId,
            state: runId === cancelledBoth.id ? ('cancelled' as const) : ('active' as const),
          })),
        ),
      cancelRun: (runId: string) => {
        cancelledThere.push(runId);
        return Promise.resolve(0);
      },
      retireRun: (runId: string) => {
        retired.push(runId);
        return Promise.resolve();
      },
    };
    await startSync(new RecordingHost(), 'sched-a', 60_000, frontier);
    assert.deepEqual(retired.sort(), [succeeded.id, failed.id, cancelled.id, cancelledBoth.id].sort());
    assert.deepEqual(cancelledThere, [cancelled.id], 'a run cancelled in the frontier already is not again');
  });
});
