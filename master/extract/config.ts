import { z } from 'zod';
import { kafkaSettingsSchema } from '../../shared/config/kafka-settings.js';
import { field } from '../../shared/config/load.js';
import { s3SettingsSchema } from '../../shared/config/s3-settings.js';
import { sqlSettingsSchema } from '../../shared/config/sql-settings.js';
import { tlsClientShape } from '../../shared/config/tls.js';
import { DEFAULT_MAX_ELEMENTS } from './clean-html.js';

/**
 * `ackcrawl extract` settings; each key is also an environment variable (`extractGroupId` →
 * ACKCRAWL_EXTRACT_GROUP_ID). Kafka, S3 and SQL as every role reads them (ACKCRAWL_KAFKA_BROKERS,
 * ACKCRAWL_S3_ENDPOINT, ACKCRAWL_SQL_URL, …). With `extractRecordsDir` set it reads that folder's
 * record files instead of Kafka (an embedded crawl's `--out`, or `ackcrawl serve`'s records).
 */
export const extractConfigSchema = z.object({
  ...kafkaSettingsSchema.shape,
  ...s3SettingsSchema.shape,
  ...sqlSettingsSchema.shape,
  ...tlsClientShape,
  /** Where the SQLite store lives when ACKCRAWL_SQL_URL is unset. */
  dataDir: z.string().min(1).default('./ackcrawl-data'),
  /** The Kafka consumer group: consumers of one group share the topic's partitions. */
  extractGroupId: z.string().min(1).max(200).default('ackcrawl-extract'),
  /** A new group starts at the topic's beginning (true) or at its end. */
  extractFromBeginning: field.bool().default(true),
  /** Read claim-checked bodies from S3/MinIO (off: such records are logged as missing bodies). */
  extractBlobStore: field.bool().default(true),
  /** Records cleaned and committed together: one SQL transaction and one offset commit each. */
  extractChunkRecords: field.int(1).default(50),
  extractMaxBytesPerPartition: field.int(64 * 1024).default(4 * 1024 * 1024),
  extractMaxBytes: field.int(64 * 1024).default(16 * 1024 * 1024),
  /** Pages longer than this (decoded characters) are logged as EXTRACT_TOO_LARGE, not cleaned. */
  extractMaxHtmlChars: field.int(1024).default(8 * 1024 * 1024),
  /** Pages with more elements are logged as EXTRACT_FAILED (Readability's own limit). */
  extractMaxElements: field.int(100).default(DEFAULT_MAX_ELEMENTS),
  /** Read this folder's record files instead of Kafka. */
  extractRecordsDir: z.string().min(1).optional(),
  /** Where the file reader keeps its position (default: `.extract-position.json` in the folder). */
  extractPositionFile: z.string().min(1).optional(),
  /** The file reader: keep following the folder (true) or stop at the end of what is there. */
  extractFollow: field.bool().default(true),
  extractPollMs: field.int(10).default(1_000),
  /** How long SIGTERM waits for the chunk in hand to commit. */
  extractShutdownMs: field.int(100).default(15_000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type ExtractConfig = z.infer<typeof extractConfigSchema>;
