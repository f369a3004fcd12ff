import { randomUUID } from 'node:crypto';
import { Client } from 'minio';
import { s3Settings } from './services.js';

/** A raw minio client on the test MinIO, to look behind the adapter and to clean up. */
export function rawMinioClient(): Client {
  const url = new URL(s3Settings.s3Endpoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    useSSL: url.protocol === 'https:',
    accessKey: s3Settings.s3AccessKey,
    secretKey: s3Settings.s3SecretKey,
    region: s3Settings.s3Region,
    pathStyle: true,
  });
}

export function testBucketName(): string {
  return `test-${randomUUID()}`;
}

/** Removes every object of `bucket`, then the bucket; a missing bucket is fine. */
export async function removeBucket(bucket: string): Promise<void> {
  const client = rawMinioClient();
  if (!(await client.bucketExists(bucket))) return;
  const names: string[] = [];
  for await (const item of client.listObjectsV2(bucket, '', true)) {
    if (typeof item.name === 'string') names.push(item.name);
  }
  if (names.length > 0) await client.removeObjects(bucket, names);
  await client.removeBucket(bucket);
}
