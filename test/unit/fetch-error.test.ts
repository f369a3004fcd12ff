import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FetchError, parseRetryAfter, toFetchError } from '../../client/crawler/fetch/fetch-error.js';

const errno = (code: string, message = `connect ${code} 192.0.2.1:80`): Error =>
  Object.assign(new Error(message), { code });

describe('toFetchError', () => {
  test('socket errno codes map to stable, retriable codes', () => {
    const cases: [string, string][] = [
      ['ECONNREFUSED', 'CONNECTION_REFUSED'],
      ['ECONNRESET', 'CONNECTION_RESET'],
      ['EPIPE', 'CONNECTION_RESET'],
      ['ETIMEDOUT', 'TIMEOUT'],
      ['ENOTFOUND', 'DNS_NOT_FOUND'],
      ['EAI_AGAIN', 'DNS_FAILURE'],
      ['EHOSTUNREACH', 'HOST_UNREACHABLE'],
      ['ENETUNREACH', 'NETWORK_UNREACHABLE'],
      ['ECONNABORTED', 'CONNECTION_ABORTED'],
    ];
    for (const [code, expected] of cases) {
      const cause = errno(code);
      const err = toFetchError(cause);
      assert.ok(err instanceof FetchError);
      assert.equal(err.code, expected, code);
      assert.equal(err.retriable, true, code);
      assert.equal(err.cause, cause, 'the original error is kept as cause');
    }
  });

  test("got's TimeoutError (any event) is a retriable TIMEOUT naming the event", () => {
    const timeout = Object.assign(new Error("Timeout awaiting 'response' for 200ms"), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      event: 'response',
    });
    const err = toFetchError(timeout);
    assert.equal(err.code, 'TIMEOUT');
    assert.equal(err.retriable, true);
    assert.match(err.message, /\(response\)/);
  });

  test("got's MaxRedirectsError is a final TOO_MANY_REDIRECTS", () => {
    const err = toFetchError(
      Object.assign(new Error('Redirected 10 times. Aborting.'), {
        name: 'MaxRedirectsError',
        code: 'ERR_TOO_MANY_REDIRECTS',
      }),
    );
    assert.equal(err.code, 'TOO_MANY_REDIRECTS');
    assert.equal(err.retriable, false);
  });

  test('the request-filtering-agent refusal is a final ADDRESS_BLOCKED', () => {
    for (const message of [
      'DNS lookup 127.0.0.1(family:4, host:127.0.0.1) is not allowed. Because, It is private IP address.',
      'DNS lookup 169.254.169.254(family:4, host:metadata) is not allowed. Because, It is meta IP address.',
      'DNS lookup 10.0.0.1(family:4, host:x) is not allowed. Because It is defined in denyIPAddressList.',
    ]) {
      // got passes the agent's error on with a generic code.
      const err = toFetchError(Object.assign(new Error(message), { code: 'ERR_GOT_REQUEST_ERROR' }));
      assert.equal(err.code, 'ADDRESS_BLOCKED', message);
      assert.equal(err.retriable, false);
    }
  });

  test('content-encoding, HTTP parser, TLS and redirect-protocol errors are final', () => {
    assert.equal(toFetchError(errno('Z_DATA_ERROR', 'incorrect header check')).code, 'BAD_CONTENT_ENCODING');
    assert.equal(toFetchError(errno('ERR_BODY_PARSE_FAILURE', 'x')).code, 'BAD_CONTENT_ENCODING');
    assert.equal(toFetchError(new Error('unexpected end of file')).code, 'BAD_CONTENT_ENCODING');
    assert.equal(toFetchError(errno('HPE_INVALID_CONSTANT', 'Parse Error')).code, 'BAD_HTTP_RESPONSE');
    assert.equal(toFetchError(errno('ERR_TLS_CERT_ALTNAME_INVALID', 'bad cert')).code, 'TLS_ERROR');
    assert.equal(toFetchError(errno('CERT_HAS_EXPIRED', 'expired')).code, 'TLS_ERROR');
    assert.equal(toFetchError(errno('ERR_UNSUPPORTED_PROTOCOL', 'ftp:')).code, 'UNSUPPORTED_REDIRECT');
    for (const code of ['Z_DATA_ERROR', 'HPE_INVALID_CONSTANT', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      assert.equal(toFetchError(errno(code)).retriable, false, code);
    }
  });

  test('anything else is a retriable FETCH_FAILED; non-Errors are described, long messages cut', () => {
    const odd = toFetchError(errno('EWHATEVER', 'strange'));
    assert.equal(odd.code, 'FETCH_FAILED');
    assert.equal(odd.retriable, true);
    assert.equal(toFetchError('a string').message, 'a string');
    assert.equal(toFetchError(new Error('x'.repeat(2_000))).message.length, 500);
  });

  test('a FetchError passes through unchanged', () => {
    const original = new FetchError('BODY_TOO_LARGE', 'big', { status: 200 });
    assert.equal(toFetchError(original), original);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  test('delta-seconds', () => {
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 5 ', now), 5_000);
    assert.equal(parseRetryAfter('0', now), 0);
  });

  test('an HTTP-date, relative to now; a past date means at once', () => {
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 12:01:30 GMT', now), 90_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now), 0);
  });

  test('capped at one day', () => {
    assert.equal(parseRetryAfter('999999999', now), 24 * 3600 * 1000);
    assert.equal(parseRetryAfter('Fri, 01 Jan 2027 12:00:00 GMT', now), 24 * 3600 * 1000);
  });

  test('absent or unreadable: null', () => {
    assert.equal(parseRetryAfter(undefined, now), null);
    assert.equal(parseRetryAfter('', now), null);
    assert.equal(parseRetryAfter('soon', now), null);
  });
});
