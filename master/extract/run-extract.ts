import { join } from 'node:path';
import { createKafkaClient } from '../../shared/adapters/page-sink/kafka-client.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { defaultSqlStoreUrl } from '../../shared/config/sql-settings.js';
import { kafkaSsl, readTlsCa } from '../../shared/config/tls.js';
import type { Logger } from '../../shared/logger.js';
import type { BlobStore } from '../../shared/ports/blob-store.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import { BatchCleaner } from './batch-cleaner.js';
import type { ExtractConfig } from './config.js';
import { KafkaExtractConsumer } from './kafka-extract-consumer.js';
import { SegmentExtractReader } from './segment-extract-reader.js';

export interface ExtractHandle {
  readonly cleaner: BatchCleaner;
  /** Settles when the reader ends: the file reader without follow at the end of the files. */
  readonly done: Promise<void>;
  /** Stops reading after the chunk in hand is committed, then closes the store. Idempotent. */
  close(): Promise<void>;
}

export interface ExtractDeps {
  logger: Logger;
  now?: () => number;
  /** Given by tests; otherwise opened from the config (and closed by close()). */
  store?: SqlStore;
  blobStore?: BlobStore | null;
}

/** Opens what `ackcrawl extract` needs and starts the reader the config names. */
export async function startExtract(config: ExtractConfig, deps: ExtractDeps): Promise<ExtractHandle> {
  const now = deps.now ?? Date.now;
  const ca = readTlsCa(config);
  const ownStore = deps.store === undefined;
  const store =
    deps.store ??
    (await openSqlStore(config.sqlUrl ?? defaultSqlStoreUrl(config.dataDir), {
      logger: deps.logger,
      ...(config.sqlCaFile ? { caFile: config.sqlCaFile } : {}),
    }));
  const blobStore =
    deps.blobStore !== undefined
      ? deps.blobStore
      : config.extractBlobStore
        ? createMinioBlobStore(config, ca)
        : null;
  const cleaner = new BatchCleaner({
    store,
    logger: deps.logger,
    options: {
      blobStore,
      maxHtmlChars: config.extractMaxHtmlChars,
      maxElements: config.extractMaxElements,
      now,
    },
  });
  const closeStore = async (): Promise<void> => {
    if (ownStore) await store.close();
  };

  if (config.extractRecordsDir !== undefined) {
    const reader = new SegmentExtractReader({
      dir: config.extractRecordsDir,
      positionFile: config.extractPositionFile ?? join(config.extractRecordsDir, '.extract-position.json'),
      cleaner,
      logger: deps.logger,
      chunkRecords: config.extractChunkRecords,
      follow: config.extractFollow,
      pollMs: config.extractPollMs,
      now,
    });
    deps.logger.info({ dir: config.extractRecordsDir, from: reader.at }, 'extract reading record files');
    const done = reader.run();
    let closing: Promise<void> | null = null;
    return {
      cleaner,
      done,
      close: () =>
        (closing ??= (async () => {
          reader.stop();
          await done.catch(() => undefined);
          await closeStore();
          deps.logger.info({ ...cleaner.counts, at: reader.at }, 'extract stopped');
        })()),
    };
  }

  const kafka = createKafkaClient({
    brokers: config.kafkaBrokers,
    clientId: `${config.kafkaClientId}-extract`,
    ssl: kafkaSsl(config.kafkaTls, ca),
    logger: deps.logger,
  });
  const consumer = new KafkaExtractConsumer({
    kafka,
    topic: config.kafkaTopic,
    groupId: config.extractGroupId,
    cleaner,
    logger: deps.logger,
    chunkRecords: config.extractChunkRecords,
    maxBytesPerPartition: config.extractMaxBytesPerPartition,
    maxBytes: config.extractMaxBytes,
    fromBeginning: config.extractFromBeginning,
  });
  try {
    await consumer.start();
  } catch (err) {
    await consumer.close().catch(() => undefined);
    await closeStore();
    throw err;
  }
  let closing: Promise<void> | null = null;
  let ended = (): void => undefined;
  const done = new Promise<void>((resolve) => (ended = resolve));
  return {
    cleaner,
    done,
    close: () =>
      (closing ??= (async () => {
        await consumer.close();
        await closeStore();
        ended();
      })()),
  };
}
