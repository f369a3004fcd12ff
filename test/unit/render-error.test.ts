import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors } from 'playwright-core';
import { NOT_A_PAGE } from '../../client/crawler/render/codes.js';
import { navigationError } from '../../client/crawler/render/render-error.js';

const nav = (message: string, tunnel: { blocked: boolean; code: string } | null = null) =>
  navigationError(new Error(`page.goto: ${message} at http://x.test/`), () => tunnel);

test('browser navigation errors get the fetcher’s codes and retry rules', () => {
  const cases: [string, string, boolean][] = [
    ['net::ERR_CONNECTION_REFUSED', 'CONNECTION_REFUSED', true],
    ['net::ERR_NAME_NOT_RESOLVED', 'DNS_NOT_FOUND', true],
    ['net::ERR_CONNECTION_RESET', 'CONNECTION_RESET', true],
    ['net::ERR_EMPTY_RESPONSE', 'CONNECTION_RESET', true],
    ['net::ERR_CONNECTION_TIMED_OUT', 'TIMEOUT', true],
    ['net::ERR_TOO_MANY_REDIRECTS', 'TOO_MANY_REDIRECTS', false],
    ['net::ERR_CERT_AUTHORITY_INVALID', 'TLS_ERROR', false],
    ['net::ERR_SSL_PROTOCOL_ERROR', 'TLS_ERROR', false],
    ['net::ERR_SOMETHING_NEW', 'RENDER_FAILED', true],
    ['Target page, context or browser has been closed', 'RENDER_FAILED', true],
  ];
  for (const [message, code, retriable] of cases) {
    const err = nav(message);
    assert.equal(err.code, code, message);
    assert.equal(err.retriable, retriable, message);
  }
});

test('timeouts, downloads and failed tunnels', () => {
  const timeout = navigationError(new errors.TimeoutError('Timeout 100ms exceeded'), () => null);
  assert.equal(timeout.code, 'RENDER_TIMEOUT');
  assert.equal(timeout.retriable, true);
  assert.equal(nav('Download is starting').code, NOT_A_PAGE);
  assert.equal(nav('net::ERR_ABORTED').code, NOT_A_PAGE);
  assert.equal(
    nav('net::ERR_TUNNEL_CONNECTION_FAILED', { blocked: true, code: 'ADDRESS_BLOCKED' }).code,
    'ADDRESS_BLOCKED',
  );
  assert.equal(
    nav('net::ERR_TUNNEL_CONNECTION_FAILED', { blocked: false, code: 'ECONNREFUSED' }).code,
    'CONNECTION_REFUSED',
  );
  assert.equal(nav('net::ERR_TUNNEL_CONNECTION_FAILED').code, 'RENDER_FAILED');
});
