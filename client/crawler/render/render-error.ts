import { errors } from 'playwright-core';
import { FetchError, toFetchError } from '../fetch/fetch-error.js';

import { NOT_A_PAGE } from './codes.js';

/** Chromium's net errors → the codes the fetcher uses for the same failure (same retry rules). */
const NET_ERRORS: Record<string, string> = {
  ERR_NAME_NOT_RESOLVED: 'ENOTFOUND',
  ERR_NAME_RESOLUTION_FAILED: 'EAI_AGAIN',
  ERR_CONNECTION_REFUSED: 'ECONNREFUSED',
  ERR_CONNECTION_RESET: 'ECONNRESET',
  ERR_CONNECTION_CLOSED: 'ECONNRESET',
  ERR_EMPTY_RESPONSE: 'ECONNRESET',
  ERR_CONNECTION_TIMED_OUT: 'ETIMEDOUT',
  ERR_TIMED_OUT: 'ETIMEDOUT',
  ERR_ADDRESS_UNREACHABLE: 'EHOSTUNREACH',
  ERR_INTERNET_DISCONNECTED: 'ENETUNREACH',
  ERR_TOO_MANY_REDIRECTS: 'ERR_TOO_MANY_REDIRECTS',
  ERR_UNSAFE_REDIRECT: 'ERR_UNSUPPORTED_PROTOCOL',
};

export function renderFailed(message: string, cause?: unknown): FetchError {
  return new FetchError('RENDER_FAILED', message.slice(0, 500), { cause });
}

/**
 * What a failed navigation means for the record. `tunnel` explains a failed HTTPS tunnel through
 * the guard proxy (Chromium itself only reports that the tunnel failed).
 */
export function navigationError(
  err: unknown,
  tunnel: () => { blocked: boolean; code: string } | null,
): FetchError {
  if (err instanceof FetchError) return err;
  const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
  if (err instanceof errors.TimeoutError) {
    return new FetchError('RENDER_TIMEOUT', `the page did not load in time: ${message}`, {
      cause: err,
    });
  }
  if (/Download is starting/i.test(message)) {
    return new FetchError(NOT_A_PAGE, message, { cause: err });
  }
  const net = /net::(ERR_[A-Z_]+)/.exec(message)?.[1];
  if (!net) return renderFailed(`the browser failed: ${message}`, err);
  if (net === 'ERR_ABORTED') return new FetchError(NOT_A_PAGE, message, { cause: err });
  if (net === 'ERR_TUNNEL_CONNECTION_FAILED') {
    const why = tunnel();
    if (why?.blocked) {
      return new FetchError('ADDRESS_BLOCKED', `refused to connect: ${message}`, {
        cause: err,
      });
    }
    if (why) return toFetchError(Object.assign(new Error(message), { code: why.code }));
  }
  if (net.startsWith('ERR_CERT_') || net.startsWith('ERR_SSL_')) {
    return new FetchError('TLS_ERROR', message, { cause: err });
  }
  const code = NET_ERRORS[net];
  if (code) return toFetchError(Object.assign(new Error(message), { code }));
  return renderFailed(`the browser failed: ${message}`, err);
}
