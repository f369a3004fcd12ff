import { resolve } from 'node:path';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import { readTlsCa } from '../../shared/config/tls.js';
import type { Logger } from '../../shared/logger.js';
import type { PageSink } from '../../shared/ports/page-sink.js';
import type { SchedulerConfig } from '../config.js';
import type { PublishTimer } from '../../shared/metrics/publish-latency.js';

export interface OpenedSink {
  sink: PageSink;
  output: string;
  close(): Promise<void>;
}

/** Tries `start` until it works: a service that is down at start is waited for, not fatal. */
async function untilStarted(start: () => Promise<void>, logger: Logger, what: string): Promise<void> {
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    try {
      return await start();
    } catch (err) {
      logger.warn({ err, retryInMs: delay }, `${what} not reachable yet; trying again`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

export async function openSink(
  config: SchedulerConfig,
  logger: Logger,
  publishTimer?: PublishTimer,
): Promise<OpenedSink> {
  if (config.sink === 'file') {
    const sink = new FileSink({
      dir: config.outDir,
      gzip: config.gzip,
      segmentBytes: config.segmentBytes,
      onError: (err, path) =>
        logger.error({ err, path }, 'could not compress a record file; it stays uncompressed'),
    });
    return { sink, output: `file:${resolve(config.outDir)}`, close: () => sink.close() };
  }
  // Loaded only here: an embedded scheduler (record files) never carries kafkajs or minio.
  const [{ createKafkaSink }, { createMinioBlobStore }] = await Promise.all([
    import('../../shared/config/kafka-sink-factory.js'),
    import('../../shared/config/minio-store.js'),
  ]);
  const ca = readTlsCa(config);
  const blobStore = createMinioBlobStore(config, ca);
  const sink = createKafkaSink(config, {
    logger: logger.child({ module: 'kafka' }),
    blobStore,
    ca,
    ...(publishTimer ? { publishTimer } : {}),
  });
  await untilStarted(() => sink.start(), logger, 'Kafka');
  return {
    sink,
    output: `kafka:${config.kafkaTopic}`,
    close: async () => {
      await sink.close();
      await blobStore.close();
    },
  };
}
