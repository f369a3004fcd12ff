import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planSync, type HostedRun } from '../../scheduler/runs/sync-plan.js';
import type { RunRow, RunState } from '../../shared/ports/sql-store.js';

const settings = { seeds: ['http://127.0.0.1:1/'] };

function row(id: string, state: RunState, extra: Partial<RunRow> = {}): RunRow {
  return {
    id,
    jobId: 'job',
    state,
    settings,
    counters: { done: 0, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 },
    createdAt: 0,
    startedAt: null,
    endedAt: null,
    schedulerId: null,
    heartbeatAt: null,
    error: null,
    scheduledBy: null,
    ...extra,
  };
}

const held = (state: HostedRun['state'], s: unknown = settings): HostedRun => ({
  state,
  settingsJson: JSON.stringify(s),
});

describe('planSync: the host follows SQL', () => {
  test('every open run not hosted is started; a paused one starts paused', () => {
    const plan = planSync(
      [row('q', 'queued'), row('r', 'running'), row('p', 'paused')],
      new Map(),
      new Map(),
    );
    assert.deepEqual(
      plan.map((a) => (a.kind === 'start' ? [a.kind, a.row.id, a.paused] : a.kind)),
      [
        ['start', 'q', false],
        ['start', 'r', false],
        ['start', 'p', true],
      ],
    );
  });

  test('pause and resume follow the stored state; a run already in line is left alone', () => {
    const hosted = new Map([
      ['a', held('active')],
      ['b', held('paused')],
      ['c', held('active')],
      ['d', held('paused')],
    ]);
    const plan = planSync(
      [row('a', 'paused'), row('b', 'running'), row('c', 'running'), row('d', 'paused')],
      new Map(),
      hosted,
    );
    assert.deepEqual(plan, [
      { kind: 'pause', runId: 'a' },
      { kind: 'resume', runId: 'b' },
    ]);
  });

  test('new settings in SQL reach the host', () => {
    const changed = row('a', 'running', { settings: { ...settings, maxPages: 9 } });
    assert.deepEqual(planSync([changed], new Map(), new Map([['a', held('active')]])), [
      { kind: 'update', row: changed },
    ]);
  });

  test('a hosted run SQL holds cancelled is cancelled; one SQL does not know (the configured crawl) and ended ones are not', () => {
    const hosted = new Map([
      ['x', held('active')],
      ['y', held('paused')],
      ['z', held('active')],
      ['done', held('finished')],
      ['gone', held('cancelled')],
    ]);
    const closed = new Map<string, RunRow | null>([
      ['x', row('x', 'cancelled')],
      ['y', null],
      ['z', row('z', 'succeeded')],
      ['done', row('done', 'cancelled')],
      ['gone', row('gone', 'cancelled')],
    ]);
    assert.deepEqual(planSync([], closed, hosted), [{ kind: 'cancel', runId: 'x' }]);
  });

  test('a run the host finished or cancelled is never re-opened or resumed from here', () => {
    const hosted = new Map([
      ['f', held('finished')],
      ['c', held('cancelled')],
    ]);
    assert.deepEqual(planSync([row('f', 'running'), row('c', 'running')], new Map(), hosted), []);
  });
});
