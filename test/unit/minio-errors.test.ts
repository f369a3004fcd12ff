import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toBlobError } from '../../shared/adapters/blob-store/minio-errors.js';

const where = { endpoint: 'http://127.0.0.1:9000', bucket: 'crawl-bodies' };
const s3 = (code: string, message = code): Error => Object.assign(new Error(message), { code });

test('wrong credentials: not retriable, and the message says where and what to fix', () => {
  const err = toBlobError('cannot store blob bodies/x', s3('InvalidAccessKeyId'), where);
  assert.equal(err.code, 'BLOB_STORE_AUTH');
  assert.equal(err.retriable, false);
  assert.match(err.message, /http:\/\/127\.0\.0\.1:9000/);
  assert.match(err.message, /crawl-bodies/);
  assert.match(err.message, /ACKCRAWL_S3_ACCESS_KEY/);
  assert.deepEqual(err.details, { ...where, s3Code: 'InvalidAccessKeyId' });
});

test('an unreachable or busy store is retriable and names the endpoint', () => {
  for (const cause of [s3('ECONNREFUSED'), s3('XMinioServerNotInitialized'), new Error('socket hang up')]) {
    const err = toBlobError('cannot stat blob bodies/x', cause, where);
    assert.equal(err.code, 'BLOB_STORE_UNAVAILABLE');
    assert.equal(err.retriable, true);
    assert.match(err.message, /S3 at http:\/\/127\.0\.0\.1:9000 is unavailable/);
  }
});

test('a missing bucket is retriable (it is created again) and names the bucket', () => {
  const err = toBlobError('cannot store blob bodies/x', s3('NoSuchBucket'), where);
  assert.equal(err.code, 'BLOB_STORE_NO_BUCKET');
  assert.equal(err.retriable, true);
  assert.match(err.message, /bucket crawl-bodies does not exist/);
});

test('anything else is a retriable BLOB_STORE_IO with the store named', () => {
  const err = toBlobError(
    'cannot store blob bodies/x',
    s3('AuthorizationHeaderMalformed', 'bad region'),
    where,
  );
  assert.equal(err.code, 'BLOB_STORE_IO');
  assert.equal(err.retriable, true);
  assert.match(err.message, /S3 at http:\/\/127\.0\.0\.1:9000, bucket crawl-bodies/);
});
