import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RUN_ACTIONS } from '../../master/api/run-actions.js';
import { runView, shownState, storedStatesFor } from '../../master/api/run-view.js';
import { runSchema } from '../../master/api/schemas/run.js';
import { scopeAllows } from '../../master/api/auth/scopes.js';
import { generateSecret, hashSecret, sameHash } from '../../master/api/auth/secrets.js';
import type { RunRow } from '../../shared/ports/sql-store.js';
import { run as runRow } from '../contract/sql-store/expect.js';

const STALE = 15_000;
const NOW = 1_000_000;

/** A run just made through the API (the SQL store contract's row), with `fields` over it. */
const queuedRow = (fields: Partial<RunRow> = {}): RunRow =>
  runRow('j1', { createdAt: NOW, settings: {}, ...fields });

describe('a run as the master shows it', () => {
  test('running only while its scheduler reports within the bound', () => {
    const run = { state: 'running' as const, schedulerId: 's1', heartbeatAt: NOW - STALE };
    assert.deepEqual(shownState(run, NOW, STALE), { state: 'running', waiting: null });
    const quiet = shownState({ ...run, heartbeatAt: NOW - STALE - 1 }, NOW, STALE);
    assert.equal(quiet.state, 'queued');
    assert.match(quiet.waiting ?? '', /scheduler s1 last reported 15 s ago \(more than 15 s\)/);
    const never = shownState({ ...run, schedulerId: null, heartbeatAt: null }, NOW, STALE);
    assert.equal(never.state, 'queued');
    assert.match(never.waiting ?? '', /its scheduler has never reported/);
  });

  test('a running run whose scheduler reports a stall stays running, and says why nothing moves', () => {
    const stall = { since: NOW - 34_400, reason: 'RabbitMQ blocks publishing (a disk or memory alarm)' };
    const run = { state: 'running' as const, schedulerId: 's1', heartbeatAt: NOW - 1_000, stall };
    assert.deepEqual(shownState(run, NOW, STALE), {
      state: 'running',
      waiting: 'RabbitMQ blocks publishing (a disk or memory alarm); nothing acknowledged for 34 s',
    });
    // A scheduler gone quiet is the stronger news: the run waits for another one.
    const quiet = shownState({ ...run, heartbeatAt: NOW - STALE - 1 }, NOW, STALE);
    assert.equal(quiet.state, 'queued');
    assert.match(quiet.waiting ?? '', /last reported/);
    // An ended run shows no stall, whatever its last report said.
    assert.deepEqual(shownState({ ...run, state: 'succeeded' }, NOW, STALE), {
      state: 'succeeded',
      waiting: null,
    });
  });

  test('other states are shown as stored; queued says it waits', () => {
    for (const state of ['paused', 'succeeded', 'failed', 'cancelled'] as const) {
      assert.deepEqual(shownState({ state, schedulerId: null, heartbeatAt: null }, NOW, STALE), {
        state,
        waiting: null,
      });
    }
    assert.match(
      shownState({ state: 'queued', schedulerId: null, heartbeatAt: null }, NOW, STALE).waiting ?? '',
      /no scheduler/,
    );
  });

  test('a filter on shown queued also reads stored running (those may be shown queued)', () => {
    assert.deepEqual(storedStatesFor(['queued']).sort(), ['queued', 'running']);
    assert.deepEqual(storedStatesFor(['running']), ['running']);
    assert.deepEqual(storedStatesFor(['paused', 'cancelled']), ['paused', 'cancelled']);
  });

  test('a run made by a schedule names the schedule and its fire time (ISO); one made through the API, null', () => {
    const row = queuedRow({ scheduledBy: { scheduleId: 's1', fireAt: Date.UTC(2026, 0, 1, 12) } });
    const shown = runView(row, NOW, STALE);
    assert.deepEqual(shown.scheduledBy, { scheduleId: 's1', fireAt: '2026-01-01T12:00:00.000Z' });
    assert.ok(runSchema.safeParse(shown).success, 'the view fits the documented schema');
    const byApi = runView({ ...row, scheduledBy: null }, NOW, STALE);
    assert.equal(byApi.scheduledBy, null);
    assert.ok(runSchema.safeParse(byApi).success);
  });

  test('a run with a time limit shows when it ends: from its start, until it has ended', () => {
    const row = queuedRow({ settings: { seeds: ['https://a.test/'], maxDurationMs: 60_000 } });
    assert.equal(runView(row, NOW, STALE).endsBy, null, 'not started');
    const running = runView({ ...row, state: 'paused', startedAt: Date.UTC(2026, 0, 1, 12) }, NOW, STALE);
    assert.equal(running.endsBy, '2026-01-01T12:01:00.000Z');
    assert.ok(runSchema.safeParse(running).success);
    const ended = { ...row, state: 'cancelled' as const, startedAt: 0, endedAt: 60_000 };
    assert.equal(runView(ended, NOW, STALE).endsBy, null, 'ended');
    assert.equal(
      runView({ ...row, startedAt: 0, settings: { seeds: [] } }, NOW, STALE).endsBy,
      null,
      'no limit',
    );
  });

  test('the command rules: resume needs paused, and goes back to where the run was', () => {
    assert.deepEqual(RUN_ACTIONS.resume.from, ['paused']);
    assert.ok(!RUN_ACTIONS.pause.from.includes('cancelled'));
    assert.ok(!RUN_ACTIONS.cancel.from.includes('succeeded'));
    const paused = { startedAt: null } as RunRow;
    assert.equal(RUN_ACTIONS.resume.to(paused), 'queued');
    assert.equal(RUN_ACTIONS.resume.to({ ...paused, startedAt: 5 }), 'running');
  });
});

describe('tokens', () => {
  test('scopes include the ones below them', () => {
    assert.ok(scopeAllows(['admin'], 'read'));
    assert.ok(scopeAllows(['admin'], 'operate'));
    assert.ok(scopeAllows(['operate'], 'read'));
    assert.ok(!scopeAllows(['operate'], 'admin'));
    assert.ok(!scopeAllows(['read'], 'operate'));
    assert.ok(!scopeAllows([], 'read'));
  });

  test('secrets are random, hashed with SHA-256, compared by digest', () => {
    const a = generateSecret();
    const b = generateSecret();
    assert.notEqual(a, b);
    assert.match(a, /^ackp_[A-Za-z0-9_-]{43}$/);
    assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.ok(sameHash(hashSecret(a), hashSecret(a)));
    assert.ok(!sameHash(hashSecret(a), hashSecret(b)));
    assert.ok(!sameHash(hashSecret(a), 'short'), 'not a digest');
  });
});
