import { MinioBlobStore } from '../adapters/blob-store/minio-blob-store.js';
import type { S3Settings } from './s3-settings.js';

/** `ca`: the CAs trusted for an https endpoint (shared/config/tls.ts readTlsCa). */
export function createMinioBlobStore(settings: S3Settings, ca?: readonly string[]): MinioBlobStore {
  return new MinioBlobStore({
    endpoint: settings.s3Endpoint,
    accessKey: settings.s3AccessKey,
    secretKey: settings.s3SecretKey,
    bucket: settings.s3Bucket,
    region: settings.s3Region,
    requestTimeoutMs: settings.s3RequestTimeoutMs,
    ca,
  });
}
