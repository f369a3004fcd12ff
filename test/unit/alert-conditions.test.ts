import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConditionMemory, evaluateCondition, type Evaluation } from '../../master/alerts/conditions.js';
import type { AlertFacts } from '../../master/alerts/facts.js';
import type { RunRow } from '../../shared/ports/sql-store.js';

const T0 = 1_800_000_000_000;
const MINUTE = 60_000;

function run(done: number): RunRow {
  return {
    id: 'run-1',
    jobId: 'job-1',
    state: 'running',
    settings: {},
    counters: { done, failed: 0, queued: 5, inFlight: 1, pagesPerSecond: 0, notModified: 0 },
    createdAt: T0,
    startedAt: T0,
    endedAt: null,
    schedulerId: 's',
    heartbeatAt: T0,
    error: null,
    scheduledBy: null,
  };
}

function facts(state: { done: number; depth: number }): AlertFacts {
  const none = () => Promise.resolve({ available: true as const, value: [] });
  return {
    lostAgents: none,
    crashLoops: none,
    runningRuns: () => Promise.resolve([run(state.done)]),
    runsEndedSince: () => Promise.resolve([]),
    failuresSince: () => Promise.resolve([]),
    deadLetterDepth: () =>
      Promise.resolve({ available: true as const, value: { queue: 'q.failed', depth: state.depth } }),
  };
}

const judged = (e: Evaluation, subject: string): 'holding' | 'undecided' | 'clear' => {
  assert.ok(e.available);
  if (e.holding.some((o) => o.subject === subject)) return 'holding';
  return e.undecided?.has(subject) ? 'undecided' : 'clear';
};

/**
 * After a master restart the memory of change over time is empty: an alert opened before it must
 * not be resolved for want of history (that sent false `.resolved` webhooks, and made two masters
 * flap), only on evidence.
 */
describe('alert conditions with little history', () => {
  it('run.stuck: a run first seen is undecided until it moves or the minutes pass', async () => {
    const memory = new ConditionMemory();
    const state = { done: 10, depth: 0 };
    const at = (ms: number) => evaluateCondition('run.stuck', { minutes: 2 }, facts(state), memory, T0 + ms);
    assert.equal(judged(await at(0), 'run-1'), 'undecided');
    assert.equal(judged(await at(MINUTE), 'run-1'), 'undecided');
    assert.equal(judged(await at(2 * MINUTE), 'run-1'), 'holding');
    state.done = 11;
    assert.equal(judged(await at(2 * MINUTE + 1_000), 'run-1'), 'clear', 'it moved: decided');
    assert.equal(judged(await at(3 * MINUTE), 'run-1'), 'clear');
    assert.equal(judged(await at(5 * MINUTE), 'run-1'), 'holding');
  });

  it('dlq.growing: undecided until the window is covered by samples', async () => {
    const memory = new ConditionMemory();
    const state = { done: 0, depth: 100 };
    const params = { windowMs: 10 * MINUTE, minIncrease: 10 };
    const at = (ms: number) => evaluateCondition('dlq.growing', params, facts(state), memory, T0 + ms);
    assert.equal(judged(await at(0), 'q.failed'), 'undecided');
    assert.equal(judged(await at(5 * MINUTE), 'q.failed'), 'undecided');
    state.depth = 120;
    assert.equal(judged(await at(6 * MINUTE), 'q.failed'), 'holding', 'growth seen is reported at once');
    assert.equal(judged(await at(17 * MINUTE), 'q.failed'), 'clear', 'a covered window without growth');
  });
});
