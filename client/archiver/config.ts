import { z } from 'zod';
import { field } from '../../shared/config/load.js';
import { kafkaSettingsSchema } from '../../shared/config/kafka-settings.js';
import { s3SettingsSchema } from '../../shared/config/s3-settings.js';
import { tlsClientShape } from '../../shared/config/tls.js';
import { archiveKey } from '../../shared/ports/blob-store.js';

function isArchiveSegment(value: string): boolean {
  try {
    archiveKey({ jobId: value, date: new Date(0), name: 'x' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Archiver settings (ACKCRAWL_<KEY>): the Kafka page stream it reads, the S3 store it writes to,
 * and when a partition's batch becomes an archive object.
 */
export const archiverConfigSchema = z.object({
  ...kafkaSettingsSchema.shape,
  // Archive names are `<topic>-p<partition>-<first>-<last>.jsonl.gz`, one path segment of 200 at most.
  kafkaTopic: kafkaSettingsSchema.shape.kafkaTopic.refine(
    (topic) => topic.length <= 130,
    'at most 130 characters, so that archive names stay one path segment',
  ),
  ...s3SettingsSchema.shape,
  /** The CA file trusted for Kafka (with kafkaTls) and an https S3 endpoint (docs/tls.md). */
  ...tlsClientShape,
  /** The `<jobId>` folder under `archives/`: one path segment. */
  archiveJobId: z
    .string()
    .refine(isArchiveSegment, 'one path segment: letters, digits and ._=+-')
    .default('default'),
  /** Kafka consumer group; archivers of one group share the partitions, each record goes to one. */
  archiveGroupId: z.string().min(1).default('ackcrawl-archiver'),
  archiveMaxRecords: field.int(1).default(5000),
  /** Uncompressed bytes of one partition's batch: what bounds the archiver's memory. */
  archiveMaxBytes: field.int(1024).default(64 * 1024 * 1024),
  archiveMaxAgeMs: field.int(1).default(60_000),
  /** Kafka drops a silent member after this; its partitions go to the others. */
  archiveSessionTimeoutMs: field.int(6000).default(30_000),
  /** SIGTERM stores the open batches within this; what is left is read again by the next run. */
  archiveStopTimeoutMs: field.int(100).default(20_000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type ArchiverConfig = z.infer<typeof archiverConfigSchema>;
