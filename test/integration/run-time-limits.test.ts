import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deadlineOf, startTimeLimits } from '../../master/runs/time-limits.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { RunCommand } from '../../shared/ports/run-control.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import { job, run } from '../contract/sql-store/expect.js';

const SEEDS = ['http://127.0.0.1/'];

describe('run time limits (master, SQLite store)', () => {
  let dir: string;
  let store: SqlStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-limits-'));
    store = await openSqlStore(join(dir, 'ackcrawl.db'));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('cancels the started runs past their limit, paused ones included, and tells the schedulers', async () => {
    const j = await store.jobs.create(job());
    const timed = (fields: Parameters<typeof run>[1]) =>
      store.runs.create(run(j.id, { settings: { seeds: SEEDS, maxDurationMs: 60_000 }, ...fields }));
    const due = await timed({ state: 'running', startedAt: 100_000 });
    const duePaused = await timed({ state: 'paused', startedAt: 100_000 });
    const notYet = await timed({ state: 'running', startedAt: 130_000 });
    const queued = await timed({ state: 'queued', startedAt: null });
    const ended = await timed({ state: 'succeeded', startedAt: 100_000, endedAt: 150_000 });
    const unlimited = await store.runs.create(
      run(j.id, { state: 'running', startedAt: 0, settings: { seeds: SEEDS } }),
    );
    const zero = await store.runs.create(
      run(j.id, { state: 'running', startedAt: 0, settings: { seeds: SEEDS, maxDurationMs: 0 } }),
    );
    const commands: RunCommand[] = [];
    let now = 160_000;
    const limits = startTimeLimits({
      runs: store.runs,
      notify: async (command) => void commands.push(command),
      everyMs: 3_600_000,
      now: () => now,
      logger: silentLogger(),
    });
    try {
      const first = await limits.sweep();
      assert.deepEqual(first.sort(), [due.id, duePaused.id].sort());
      assert.deepEqual(
        commands.map((c) => `${c.type} ${c.runId}`).sort(),
        [`cancel ${due.id}`, `cancel ${duePaused.id}`].sort(),
      );
      for (const id of [due.id, duePaused.id]) {
        const row = await store.runs.get(id);
        assert.equal(row?.state, 'cancelled');
        assert.equal(row?.endedAt, 160_000);
        assert.equal(row?.error, 'time limit: maxDurationMs 60000 reached (60 s since it started)');
      }
      for (const [id, state] of [
        [notYet.id, 'running'],
        [queued.id, 'queued'],
        [ended.id, 'succeeded'],
        [unlimited.id, 'running'],
        [zero.id, 'running'],
      ] as const) {
        assert.equal((await store.runs.get(id))?.state, state, id);
      }
      // The next pass: nothing twice; the later run's time comes.
      now = 190_000;
      assert.deepEqual(await limits.sweep(), [notYet.id]);
      assert.equal(commands.length, 3);
      assert.deepEqual(await limits.sweep(), []);
    } finally {
      limits.close();
    }
  });

  test('a run that ended meanwhile (another master, a person) is left as it ended, and no command goes', async () => {
    const j = await store.jobs.create(job());
    const r = await store.runs.create(
      run(j.id, { state: 'running', startedAt: 0, settings: { seeds: SEEDS, maxDurationMs: 1_000 } }),
    );
    const commands: RunCommand[] = [];
    const limits = startTimeLimits({
      // A list read before the other end, a compare-and-set after it.
      runs: {
        list: async (query) => {
          const page = await store.runs.list(query);
          await store.runs.transition(r.id, ['running'], 'cancelled', {
            endedAt: 5,
            error: 'cancelled by ops',
          });
          return page;
        },
        transition: (...args) => store.runs.transition(...args),
      },
      notify: async (command) => void commands.push(command),
      everyMs: 3_600_000,
      now: () => 10_000,
      logger: silentLogger(),
    });
    try {
      assert.deepEqual(await limits.sweep(), []);
      assert.deepEqual(commands, []);
      const row = await store.runs.get(r.id);
      assert.equal(row?.error, 'cancelled by ops');
      assert.equal(row?.endedAt, 5);
    } finally {
      limits.close();
    }
  });

  test('deadlineOf: none without a positive limit or before the start', () => {
    assert.equal(deadlineOf({ settings: { maxDurationMs: 5 }, startedAt: 10 }), 15);
    assert.equal(deadlineOf({ settings: { maxDurationMs: 5 }, startedAt: null }), null);
    assert.equal(deadlineOf({ settings: { maxDurationMs: 0 }, startedAt: 10 }), null);
    assert.equal(deadlineOf({ settings: { maxDurationMs: '5' }, startedAt: 10 }), null);
    assert.equal(deadlineOf({ settings: null, startedAt: 10 }), null);
  });
});
