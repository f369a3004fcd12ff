import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CRAWLER_CRASHED, CrashTally } from '../../scheduler/dispatch/crash-tally.js';
import { crashOutcomes } from '../../scheduler/outcomes/crash-outcomes.js';
import { decideAfterCrash } from '../../scheduler/retry/retry-policy.js';
import { silentLogger } from '../../shared/logger.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import type { Lease } from '../../shared/protocol/task.js';

const options = { retryDelayMs: 300_000, maxAttempts: 3 };

function lease(taskId: string, fields: Partial<Lease> = {}): Lease {
  return {
    runId: 'default',
    taskId,
    leaseId: `${taskId}-lease`,
    url: `https://a.test/${taskId}`,
    host: 'a.test',
    depth: 1,
    priority: 0,
    parentUrl: 'https://a.test/',
    attempt: 1,
    lastError: null,
    ...fields,
  };
}

describe('decideAfterCrash', () => {
  test('first two strikes: back as it is; third: an attempt through the retry tiers; fourth: final', () => {
    assert.deepEqual(decideAfterCrash(1, 1, options), { kind: 'release' });
    assert.deepEqual(decideAfterCrash(2, 1, options), { kind: 'release' });
    assert.deepEqual(decideAfterCrash(3, 1, options), { kind: 'retry', delayMs: 0 });
    assert.deepEqual(decideAfterCrash(3, 2, options), { kind: 'retry', delayMs: 300_000 });
    assert.deepEqual(decideAfterCrash(4, 2, options), { kind: 'final' });
  });

  test('a third strike on the last attempt is final', () => {
    assert.deepEqual(decideAfterCrash(3, 3, options), { kind: 'final' });
  });
});

describe('CrashTally', () => {
  test('counts strikes per task and forgets settled tasks', () => {
    const tally = new CrashTally();
    const a = lease('a');
    assert.equal(tally.isSuspect(a), false);
    assert.equal(tally.strike(a), 1);
    assert.equal(tally.isSuspect(a), true);
    assert.equal(tally.strike(a), 2);
    assert.equal(tally.count(lease('b')), 0);
    tally.forget('a');
    assert.equal(tally.count(a), 0);
    assert.equal(tally.size, 0);
  });

  test('bounded: past its size the least recently struck task is forgotten', () => {
    const tally = new CrashTally(3);
    for (const id of ['a', 'b', 'c']) tally.strike(lease(id));
    tally.strike(lease('a'));
    tally.strike(lease('d'));
    assert.equal(tally.size, 3);
    assert.equal(tally.count(lease('b')), 0, 'b was struck least recently');
    assert.equal(tally.count(lease('a')), 2);
  });

  test('a counted crash survives in the task’s last error: the next strike is the fourth', () => {
    const tally = new CrashTally();
    const retried = lease('a', { attempt: 2, lastError: `${CRAWLER_CRASHED}: in flight on 3 crawlers` });
    assert.equal(tally.isSuspect(retried), true);
    assert.equal(tally.strike(retried), 4);
  });
});

describe('crashOutcomes', () => {
  test('release twice, then a retry with CRAWLER_CRASHED, then a final failure record through the settler', () => {
    const calls: { kind: string; lease: Lease; delayMs?: number; error: string; record?: SinkRecord }[] = [];
    const policy = crashOutcomes({
      tally: new CrashTally(),
      settle: {
        fail: (l, record, error) => calls.push({ kind: 'fail', lease: l, error, record }),
        retry: (l, delayMs, error) => calls.push({ kind: 'retry', lease: l, delayMs, error }),
      },
      retry: () => options,
      clock: () => Date.UTC(2026, 0, 1),
      logger: silentLogger(),
    });
    const poison = lease('p');
    assert.equal(policy.struck(poison), 'release');
    assert.equal(calls.length, 0);
    assert.equal(policy.isSuspect(poison), true);
    assert.equal(policy.struck(poison), 'release');
    assert.equal(calls.length, 0);
    assert.equal(policy.struck(poison), 'settled');
    assert.equal(calls[0]?.kind, 'retry');
    assert.equal(calls[0]?.delayMs, 0);
    assert.match(calls[0]?.error ?? '', /^CRAWLER_CRASHED: /);
    // The retry comes back as attempt 2, and crashes a fourth crawler.
    assert.equal(policy.struck({ ...poison, attempt: 2, lastError: calls[0]?.error ?? null }), 'settled');
    assert.equal(calls[1]?.kind, 'fail');
    const record = JSON.parse(calls[1]?.record?.value.toString('utf8') ?? '{}') as PageRecord;
    assert.equal(record.url, poison.url);
    assert.equal(record.outcome, 'failed');
    assert.equal(record.error?.code, CRAWLER_CRASHED);
    assert.equal(record.attempt, 2);
    assert.equal(record.crawlerId, 'scheduler');
    assert.equal(policy.isSuspect(lease('p')), false, 'a task settled for good is forgotten');
  });
});
