import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MinioBlobStore } from '../../shared/adapters/blob-store/minio-blob-store.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { rawMinioClient, removeBucket, testBucketName } from '../helpers/minio-bucket.js';
import { requireMinio, s3Settings } from '../helpers/services.js';
import { blobStoreContract } from './blob-store.contract.js';

async function freshStore(): Promise<{
  store: MinioBlobStore;
  bucket: string;
  cleanup: () => Promise<void>;
}> {
  await requireMinio();
  const bucket = testBucketName();
  const store = createMinioBlobStore({ ...s3Settings, s3Bucket: bucket });
  return { store, bucket, cleanup: () => removeBucket(bucket) };
}

blobStoreContract('minio blob store', freshStore);

describe('minio blob store: adapter specifics', () => {
  it('creates its bucket on first use and keeps the content type', async () => {
    const { store, bucket, cleanup } = await freshStore();
    try {
      const raw = rawMinioClient();
      assert.equal(await raw.bucketExists(bucket), false);
      const put = await store.putContentAddressed(Buffer.from('<p>x</p>'), {
        contentType: 'text/html; charset=utf-8',
      });
      assert.equal(await raw.bucketExists(bucket), true);
      const stat = await raw.statObject(bucket, put.key);
      assert.equal(stat.metaData['content-type'], 'text/html; charset=utf-8');
      assert.deepEqual(store.location, { store: 's3', bucket });
    } finally {
      await store.close();
      await cleanup();
    }
  });

  it('reports an unreachable endpoint as a retriable BLOB_STORE_UNAVAILABLE', async () => {
    // Nothing listens on port 1.
    const store = createMinioBlobStore({
      ...s3Settings,
      s3Endpoint: 'http://127.0.0.1:1',
      s3Bucket: testBucketName(),
    });
    await assert.rejects(store.get('a'), {
      name: 'StorageError',
      code: 'BLOB_STORE_UNAVAILABLE',
      retriable: true,
    });
    await store.close();
  });

  it('reports wrong credentials as a non-retriable BLOB_STORE_AUTH, without the secret', async () => {
    await requireMinio();
    const secret = 'not-the-secret-at-all';
    const store = createMinioBlobStore({ ...s3Settings, s3SecretKey: secret, s3Bucket: testBucketName() });
    await assert.rejects(store.exists('a'), (err: Error & { code?: string; retriable?: boolean }) => {
      assert.equal(err.code, 'BLOB_STORE_AUTH');
      assert.equal(err.retriable, false);
      assert.ok(!err.message.includes(secret));
      return true;
    });
    await store.close();
  });

  it('rejects an endpoint that is not an http(s) URL', () => {
    assert.throws(
      () => new MinioBlobStore({ endpoint: 'ftp://x', accessKey: 'a', secretKey: 'b', bucket: 'c' }),
      {
        code: 'BLOB_STORE_CONFIG',
      },
    );
  });
});
