import { AppError, StorageError } from '../../errors.js';

/** S3 error codes meaning "nothing under this key". */
export const NOT_FOUND_CODES = new Set(['NoSuchKey', 'NotFound']);

const AUTH_CODES = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AllAccessDisabled',
  'AccountProblem',
]);
const BUSY_CODES = new Set([
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'XMinioServerNotInitialized',
  'XMinioStorageFull',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'BLOB_STORE_TIMEOUT',
]);

export function s3Code(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
}

/**
 * One StorageError per failure class, so a caller knows what happens next: the store is down or
 * busy (retriable), credentials are wrong (not retriable: a person must fix the configuration), or
 * something else went wrong (retriable, as StorageErrors are by default).
 */
export function toBlobError(what: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  const code = s3Code(err);
  const message = err instanceof Error ? err.message : String(err);
  if (AUTH_CODES.has(code)) {
    return new StorageError('BLOB_STORE_AUTH', `${what}: S3 refused the credentials (${code})`, {
      retriable: false,
      cause: err,
    });
  }
  // minio's request layer turns 5xx/429 answers into plain Errors with this wording.
  if (
    BUSY_CODES.has(code) ||
    NETWORK_CODES.has(code) ||
    /socket hang up|Retryable HTTP status/i.test(message)
  ) {
    return new StorageError('BLOB_STORE_UNAVAILABLE', `${what}: S3 is unavailable (${code || message})`, {
      cause: err,
    });
  }
  if (code === 'NoSuchBucket') {
    return new StorageError('BLOB_STORE_NO_BUCKET', `${what}: the bucket does not exist`, { cause: err });
  }
  return new StorageError('BLOB_STORE_IO', `${what}: ${code ? `${code}: ` : ''}${message}`, { cause: err });
}
