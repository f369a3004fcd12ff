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

/** Which store a failure is about, so its message can say where to look. */
export interface BlobStoreWhere {
  /** The endpoint's origin (`http://host:port`, never credentials). */
  endpoint: string;
  bucket: string;
}

/**
 * One StorageError per failure class, so a caller knows what happens next: the store is down or
 * busy (retriable), credentials are wrong (not retriable: a person must fix the configuration), the
 * bucket is missing (retriable: it is created again on the next call), or something else went
 * wrong (retriable, as StorageErrors are by default). Messages name the endpoint and bucket and,
 * where a person must act, what to fix; none of these is about a particular blob, so a caller
 * that writes records must wait for the store, never give up on the records.
 */
export function toBlobError(what: string, err: unknown, where?: BlobStoreWhere): AppError {
  if (err instanceof AppError) return err;
  const code = s3Code(err);
  const message = err instanceof Error ? err.message : String(err);
  const at = where ? `S3 at ${where.endpoint}` : 'S3';
  const bucket = where ? `bucket ${where.bucket}` : 'the bucket';
  const details = { ...where, ...(code ? { s3Code: code } : {}) };
  if (AUTH_CODES.has(code)) {
    return new StorageError(
      'BLOB_STORE_AUTH',
      `${what}: ${at} refused the credentials for ${bucket} (${code}); fix the access key and secret key (ACKCRAWL_S3_ACCESS_KEY, ACKCRAWL_S3_SECRET_KEY) or the permissions they have on the bucket`,
      { cause: err, details },
    );
  }
  // minio's request layer turns 5xx/429 answers into plain Errors with this wording.
  if (
    BUSY_CODES.has(code) ||
    NETWORK_CODES.has(code) ||
    /socket hang up|Retryable HTTP status/i.test(message)
  ) {
    return new StorageError(
      'BLOB_STORE_UNAVAILABLE',
      `${what}: ${at} is unavailable (${code || message}); check that it runs and is reachable (ACKCRAWL_S3_ENDPOINT)`,
      { cause: err, details },
    );
  }
  if (code === 'NoSuchBucket') {
    return new StorageError(
      'BLOB_STORE_NO_BUCKET',
      `${what}: ${bucket} does not exist at ${at}; it is created again on the next try (create it by hand, or allow s3:CreateBucket, if that is refused)`,
      { cause: err, details },
    );
  }
  return new StorageError(
    'BLOB_STORE_IO',
    `${what} (${at}, ${bucket}): ${code ? `${code}: ` : ''}${message}`,
    {
      cause: err,
      details,
    },
  );
}
