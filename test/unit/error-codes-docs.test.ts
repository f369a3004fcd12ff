import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ERROR_CODES_PATH, renderErrorCodes } from '../../scripts/docs/error-codes.js';
import { AppError, InvalidInputError } from '../../shared/errors.js';
import { catalogue, errorCodeFacts, toErrorCode } from '../../shared/error-codes/index.js';
import { FetchError } from '../../client/crawler/fetch/fetch-error.js';

describe('the error-code catalogue', () => {
  test('docs/error-codes.md is generated from it', () => {
    assert.equal(readFileSync(ERROR_CODES_PATH, 'utf8'), renderErrorCodes(), 'run: npm run docs:generate');
  });

  test('a code is declared once, in one group', () => {
    const codes = catalogue().map((entry) => entry.code);
    assert.equal(new Set(codes).size, codes.length, 'duplicate codes across groups');
  });

  test('errors take retriable and status from it', () => {
    assert.equal(new FetchError('TIMEOUT', 'slow').retriable, true);
    assert.equal(new FetchError('BAD_HTTP_RESPONSE', 'bad').retriable, false);
    assert.equal(new FetchError('HTTP_503', 'down', { status: 503 }).retriable, true);
    assert.equal(new FetchError('HTTP_404', 'gone', { status: 404 }).retriable, false);
    assert.equal(new AppError('REQUEST_TOO_LARGE', 'big').status, 413);
    assert.equal(new AppError('UNAUTHORIZED', 'who').status, 401);
    assert.equal(new InvalidInputError('URL_INVALID', 'bad url').status, 400);
    assert.equal(new AppError('SINK_DISK_FULL', 'full').retriable, true);
    assert.equal(new AppError('SINK_RECORD_TOO_LARGE', 'big').retriable, false);
  });

  test('every entry says what it means, and API codes have an error status', () => {
    for (const { code, facts } of catalogue()) {
      assert.ok(facts.meaning.length > 10, `${code} has a meaning`);
      if (facts.group === 'api') assert.ok((facts.status ?? 0) >= 400, `${code} has a 4xx/5xx status`);
    }
  });

  test('codes from other processes are kept when known, replaced when not', () => {
    assert.equal(toErrorCode('CRAWLER_CRASHED', 'UNKNOWN'), 'CRAWLER_CRASHED');
    assert.equal(toErrorCode('HTTP_418', 'UNKNOWN'), 'HTTP_418');
    assert.equal(toErrorCode('NOT_A_CODE_WE_KNOW', 'UNKNOWN'), 'UNKNOWN');
    assert.equal(toErrorCode(42, 'UNKNOWN'), 'UNKNOWN');
    assert.equal(errorCodeFacts('HTTP_500')?.retriable, true);
  });
});
