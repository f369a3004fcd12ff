import { z } from 'zod';
import { field } from './load.js';

/**
 * Where large bodies and raw archives go in the distributed setup (MinIO or any S3). Each key is
 * also an environment variable: `s3Endpoint` → ACKCRAWL_S3_ENDPOINT. Defaults point at the MinIO
 * that scripts/services.sh starts. Role schemas spread these fields: `z.object({ ...s3SettingsSchema.shape })`.
 * The store itself is made by minio-store.ts, so reading the settings never loads the minio client.
 */
export const s3SettingsSchema = z.object({
  s3Endpoint: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL such as http://127.0.0.1:9000' })
    .default('http://127.0.0.1:9000'),
  s3AccessKey: z.string().min(1).default('ackcrawl'),
  /** Redacted in logs (shared/logger.ts). */
  s3SecretKey: z.string().min(1).default('ackcrawl-secret'),
  s3Bucket: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'an S3 bucket name: 3-63 lower-case letters, digits, dots, dashes',
    )
    .default('ackcrawl'),
  s3Region: z.string().min(1).default('us-east-1'),
  s3RequestTimeoutMs: field.int(1).default(30_000),
});

export type S3Settings = z.infer<typeof s3SettingsSchema>;
