import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostGate } from '../../scheduler/politeness/host-gate.js';

describe('HostGate', () => {
  test('a host never seen may start at once', () => {
    const gate = new HostGate({ concurrency: 1, delayMs: 1_000 });
    assert.equal(gate.waitMs('a.test', 0), 0);
    assert.equal(gate.inFlight('a.test'), 0);
  });

  test('at least delayMs between two starts to a host, measured from the injected now', () => {
    const gate = new HostGate({ concurrency: 5, delayMs: 500 });
    gate.start('a.test', 10_000);
    assert.equal(gate.waitMs('a.test', 10_000), 500);
    assert.equal(gate.waitMs('a.test', 10_200), 300);
    assert.equal(gate.waitMs('a.test', 10_500), 0);
    assert.equal(gate.waitMs('a.test', 99_999), 0);
    gate.start('a.test', 10_500);
    assert.equal(gate.waitMs('a.test', 10_500), 500);
  });

  test('at most `concurrency` in flight: a full host waits for a finish (Infinity), not for time', () => {
    const gate = new HostGate({ concurrency: 2, delayMs: 0 });
    gate.start('a.test', 0);
    assert.equal(gate.waitMs('a.test', 0), 0);
    gate.start('a.test', 0);
    assert.equal(gate.inFlight('a.test'), 2);
    assert.equal(gate.waitMs('a.test', 0), Infinity);
    assert.equal(gate.waitMs('a.test', 1e12), Infinity, 'time alone does not free a slot');
    gate.finish('a.test', 5);
    assert.equal(gate.inFlight('a.test'), 1);
    assert.equal(gate.waitMs('a.test', 5), 0);
  });

  test('a finish keeps the delay running: the next start still waits for it', () => {
    const gate = new HostGate({ concurrency: 1, delayMs: 1_000 });
    gate.start('a.test', 0);
    gate.finish('a.test', 100);
    assert.equal(gate.inFlight('a.test'), 0);
    assert.equal(gate.waitMs('a.test', 100), 900);
    assert.equal(gate.waitMs('a.test', 1_000), 0);
  });

  test('an idle host whose delay has passed is forgotten, and starts afresh', () => {
    const gate = new HostGate({ concurrency: 1, delayMs: 100 });
    gate.start('a.test', 0);
    gate.finish('a.test', 500);
    assert.equal(gate.inFlight('a.test'), 0);
    assert.equal(gate.waitMs('a.test', 0), 0, 'no state left, even for an earlier now');
  });

  test('hosts are independent: a busy or deferred host never holds back another', () => {
    const gate = new HostGate({ concurrency: 1, delayMs: 1_000 });
    gate.start('slow.test', 0);
    gate.defer('slow.test', 60_000);
    assert.equal(gate.waitMs('slow.test', 0), Infinity);
    assert.equal(gate.waitMs('fast.test', 0), 0);
    gate.start('fast.test', 0);
    assert.equal(gate.inFlight('fast.test'), 1);
    assert.equal(gate.inFlight('slow.test'), 1);
  });

  test('defer pushes the next start back (Retry-After) and never brings it forward', () => {
    const gate = new HostGate({ concurrency: 2, delayMs: 500 });
    gate.defer('a.test', 30_000);
    assert.equal(gate.waitMs('a.test', 0), 30_000);
    gate.defer('a.test', 10_000);
    assert.equal(gate.waitMs('a.test', 0), 30_000, 'an earlier defer does not shorten the wait');
    gate.start('a.test', 30_000);
    gate.defer('a.test', 100);
    assert.equal(gate.waitMs('a.test', 30_000), 500);
  });

  test('a finish for an unknown host is a no-op', () => {
    const gate = new HostGate({ concurrency: 1, delayMs: 0 });
    gate.finish('never.test', 0);
    assert.equal(gate.inFlight('never.test'), 0);
    assert.equal(gate.waitMs('never.test', 0), 0);
  });
});
