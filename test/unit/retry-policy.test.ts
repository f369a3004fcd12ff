import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_ATTEMPTS, decideRetry } from '../../scheduler/retry/retry-policy.js';

const options = { retryDelayMs: 300_000, maxAttempts: DEFAULT_MAX_ATTEMPTS };

describe('decideRetry', () => {
  test('three tiers: at once, after the delay, then final', () => {
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 1, retryAfterMs: null }, options),
      {
        kind: 'retry',
        delayMs: 0,
      },
    );
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 2, retryAfterMs: null }, options),
      {
        kind: 'retry',
        delayMs: 300_000,
      },
    );
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 3, retryAfterMs: null }, options),
      {
        kind: 'final',
      },
    );
  });

  test('a Retry-After is never undercut: it delays even the first retry', () => {
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 1, retryAfterMs: 2_000 }, options),
      {
        kind: 'retry',
        delayMs: 2_000,
      },
    );
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 2, retryAfterMs: 900_000 }, options),
      {
        kind: 'retry',
        delayMs: 900_000,
      },
    );
  });

  test('a Retry-After shorter than the second-tier delay does not shorten it', () => {
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 2, retryAfterMs: 1_000 }, options),
      {
        kind: 'retry',
        delayMs: 300_000,
      },
    );
  });

  test('a non-retriable failure is final at once, whatever the attempt or Retry-After', () => {
    for (const attempt of [1, 2]) {
      assert.deepEqual(
        decideRetry({ code: 'HTTP_404', reportedRetriable: false, attempt, retryAfterMs: 5_000 }, options),
        {
          kind: 'final',
        },
      );
    }
  });

  test('the last attempt is final even with a Retry-After', () => {
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 3, retryAfterMs: 1_000 }, options),
      {
        kind: 'final',
      },
    );
  });

  test('maxAttempts bounds the number of fetches', () => {
    const once = { retryDelayMs: 1_000, maxAttempts: 1 };
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 1, retryAfterMs: null }, once),
      {
        kind: 'final',
      },
    );

    const five = { retryDelayMs: 1_000, maxAttempts: 5 };
    const decisions = [1, 2, 3, 4, 5].map((attempt) =>
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt, retryAfterMs: null }, five),
    );
    assert.deepEqual(decisions, [
      { kind: 'retry', delayMs: 0 },
      { kind: 'retry', delayMs: 1_000 },
      { kind: 'retry', delayMs: 1_000 },
      { kind: 'retry', delayMs: 1_000 },
      { kind: 'final' },
    ]);
  });

  test('an attempt beyond maxAttempts (e.g. after lowering it) is final', () => {
    assert.deepEqual(
      decideRetry({ code: 'TIMEOUT', reportedRetriable: true, attempt: 7, retryAfterMs: null }, options),
      {
        kind: 'final',
      },
    );
  });

  test('the error catalogue decides what is retried, whatever the crawler reports', () => {
    const first = (code: string, reportedRetriable: boolean) =>
      decideRetry({ code, reportedRetriable, attempt: 1, retryAfterMs: null }, options).kind;
    // A malformed response is final everywhere (it once was retriable in one place, not another).
    assert.equal(first('BAD_HTTP_RESPONSE', true), 'final');
    assert.equal(first('EMPTY_RESPONSE', false), 'retry');
    assert.equal(first('HTTP_503', false), 'retry');
    assert.equal(first('HTTP_429', false), 'retry');
    assert.equal(first('HTTP_404', true), 'final');
    // A code this version does not know (a crawler of another one): its report stands.
    assert.equal(first('SOME_FUTURE_CODE', true), 'retry');
    assert.equal(first('SOME_FUTURE_CODE', false), 'final');
  });
});
