import { join, resolve } from 'node:path';
import { openSqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { FileSink } from '../../shared/adapters/page-sink/file-sink.js';
import type { Logger } from '../../shared/logger.js';
import type { SchedulerConfig } from '../config.js';
import type { Backend } from './backend.js';

/**
 * One machine, no servers: a SQLite frontier and record files, both in `outDir`. The scheduler is
 * the frontier file's only consumer, so leases left by a crashed run are handed back at once.
 */
export function openEmbeddedBackend(config: SchedulerConfig, logger: Logger): Backend {
  // Commits need not wait for the disk: the record files are fdatasynced before each settle, and a
  // settle lost to a power cut is replayed from them at start (FileSink.recover), links included.
  const frontier = openSqliteFrontier({
    path: join(config.outDir, 'frontier.sqlite'),
    leaseMs: config.leaseMs,
    durability: 'normal',
  });
  const released = frontier.releaseAllLeases();
  if (released > 0) logger.info({ released }, 'resuming: leases of the previous run handed back');
  const sink = new FileSink({
    dir: config.outDir,
    gzip: config.gzip,
    segmentBytes: config.segmentBytes,
    onError: (err, path) =>
      logger.error({ err, path }, 'could not compress a record file; it stays uncompressed'),
  });
  return {
    frontier,
    sink,
    output: `file:${resolve(config.outDir)}`,
    close: async () => {
      await sink.close();
      await frontier.close();
    },
  };
}
