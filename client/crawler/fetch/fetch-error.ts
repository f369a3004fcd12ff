import { AppError } from '../../../shared/errors.js';
import type { PageErrorCode } from '../../../shared/error-codes/index.js';

/**
 * A fetch that produced no usable page. `code` lands in the record; whether the retry tiers apply
 * is the error catalogue's call (shared/error-codes/page.ts), never the thrower's.
 */
export class FetchError extends AppError {
  declare readonly code: PageErrorCode;
  readonly httpStatus: number | null;
  readonly retryAfterMs: number | null;
  constructor(
    code: PageErrorCode,
    message: string,
    options: { status?: number | null; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.httpStatus = options.status ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

/**
 * The error of a fetch or render whose task was withdrawn: the connection that brought the task
 * ended, the scheduler has handed the task back, and nothing of this attempt is reported.
 */
export function taskWithdrawn(): FetchError {
  return new FetchError('CONNECTION_ABORTED', 'the fetch was aborted: its task was withdrawn');
}

const NETWORK_CODES: Record<string, PageErrorCode> = {
  ECONNREFUSED: 'CONNECTION_REFUSED',
  ECONNRESET: 'CONNECTION_RESET',
  EPIPE: 'CONNECTION_RESET',
  ETIMEDOUT: 'TIMEOUT',
  ENOTFOUND: 'DNS_NOT_FOUND',
  EAI_AGAIN: 'DNS_FAILURE',
  EHOSTUNREACH: 'HOST_UNREACHABLE',
  ENETUNREACH: 'NETWORK_UNREACHABLE',
  ECONNABORTED: 'CONNECTION_ABORTED',
};

/** Turns whatever got, the socket layer or the address filter threw into a typed FetchError. */
export function toFetchError(err: unknown): FetchError {
  if (err instanceof FetchError) return err;
  const e = err as { code?: string; message?: string; name?: string; event?: string; cause?: unknown };
  // got wraps what its hooks throw (a redirect's wait: redirect-spacing.ts).
  if (e.cause instanceof FetchError) return e.cause;
  const message = (e.message ?? String(err)).slice(0, 500);
  if (message.includes('is not allowed. Because')) {
    return new FetchError('ADDRESS_BLOCKED', `refused to connect: ${message}`, {
      cause: err,
    });
  }
  if (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT') {
    return new FetchError('TIMEOUT', `timed out (${e.event ?? 'request'}): ${message}`, {
      cause: err,
    });
  }
  if (e.code === 'ERR_TOO_MANY_REDIRECTS') {
    return new FetchError('TOO_MANY_REDIRECTS', message, { cause: err });
  }
  if (e.code === 'ERR_INVALID_URL') {
    // Task URLs are normalised before they are queued, so an unparsable URL here is a Location.
    return new FetchError('BAD_REDIRECT', `redirect to an invalid URL: ${message}`, {
      cause: err,
    });
  }
  if (e.code === 'ERR_UNSUPPORTED_PROTOCOL') {
    return new FetchError('UNSUPPORTED_REDIRECT', message, { cause: err });
  }
  if (
    e.code?.startsWith('Z_') ||
    // Brotli's decoder errors: ERR__ERROR_FORMAT_PADDING_1 and kin.
    e.code?.startsWith('ERR__ERROR_') ||
    e.code?.startsWith('ERR_BROTLI') ||
    e.code === 'ERR_BODY_PARSE_FAILURE' ||
    /incorrect header check|unexpected end of file/i.test(message)
  ) {
    return new FetchError('BAD_CONTENT_ENCODING', message, { cause: err });
  }
  if (e.code?.startsWith('HPE_')) {
    return new FetchError('BAD_HTTP_RESPONSE', `malformed HTTP response: ${message}`, {
      cause: err,
    });
  }
  const mapped = e.code ? NETWORK_CODES[e.code] : undefined;
  if (mapped) return new FetchError(mapped, message, { cause: err });
  if (e.code?.startsWith('ERR_TLS') || e.code?.includes('CERT')) {
    return new FetchError('TLS_ERROR', message, { cause: err });
  }
  return new FetchError('FETCH_FAILED', message, { cause: err });
}

/** Retry-After as ms: delta-seconds or an HTTP date. Null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()) * 1000, 24 * 3600 * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.min(at - now, 24 * 3600 * 1000));
}
