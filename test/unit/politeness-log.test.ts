import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PolitenessLog } from '../../scripts/site/politeness-log.js';

describe('a bench host politeness log', () => {
  test('counts starts closer than the delay less the slack, start to start', () => {
    const log = new PolitenessLog({ concurrency: 5, delayMs: 100, toleranceMs: 5 });
    log.arrive(0);
    log.leave();
    log.arrive(96); // 4 ms short: within the slack
    log.arrive(190); // 94 ms after the last start, though the one before is still in flight
    log.leave();
    log.leave();
    assert.deepEqual(log.stats(), {
      requests: 3,
      concurrencyViolations: 0,
      delayViolations: 1,
      maxInFlight: 2,
      minGapMs: 94,
      meanGapMs: 95,
      firstAt: 0,
      lastAt: 190,
    });
  });

  test('counts a request that arrives with the limit already in flight', () => {
    const log = new PolitenessLog({ concurrency: 1, delayMs: 0, toleranceMs: 5 });
    log.arrive(0);
    log.arrive(1);
    log.leave();
    log.arrive(2);
    log.leave();
    log.leave();
    log.arrive(3);
    assert.equal(log.stats().concurrencyViolations, 2);
    assert.equal(log.stats().delayViolations, 0);
    assert.equal(log.stats().maxInFlight, 2);
  });

  test('reset zeroes the figures and forgets the last start', () => {
    const log = new PolitenessLog({ concurrency: 1, delayMs: 100, toleranceMs: 0 });
    log.arrive(0);
    log.leave();
    log.reset();
    log.arrive(10);
    assert.deepEqual(log.stats(), {
      requests: 1,
      concurrencyViolations: 0,
      delayViolations: 0,
      maxInFlight: 1,
      minGapMs: null,
      meanGapMs: null,
      firstAt: 10,
      lastAt: 10,
    });
  });
});
