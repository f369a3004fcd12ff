import { loadConfig } from '../../shared/config/load.js';
import { createMinioBlobStore } from '../../shared/config/minio-store.js';
import { readTlsCa } from '../../shared/config/tls.js';
import { ConfigError } from '../../shared/errors.js';
import { createLogger } from '../../shared/logger.js';
import { isEntryPoint, onShutdownSignal } from '../../shared/lifecycle/signals.js';
import { exitOnFault } from '../../shared/lifecycle/faults.js';
import { createArchiver } from './archiver.js';
import { archiverConfigSchema } from './config.js';

/** Composition root of the archiver: the page topic into gzip JSON-lines archives in S3. */
export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(archiverConfigSchema, env);
  const logger = createLogger({ name: 'archiver', level: config.logLevel });
  exitOnFault(logger);
  const ca = readTlsCa(config);
  const blobStore = createMinioBlobStore(config, ca);
  const archiver = createArchiver(config, {
    blobStore,
    ca,
    logger,
    onFatal: () => process.exit(1),
  });
  onShutdownSignal(
    logger,
    async () => {
      await archiver.close();
      await blobStore.close();
    },
    config.archiveStopTimeoutMs + 5_000,
  );
  await archiver.start();
}

if (isEntryPoint(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`ackcrawl archiver: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  });
}
