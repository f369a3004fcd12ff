import { openRunControl } from '../../shared/config/run-control.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { defaultSqlStoreUrl } from '../../shared/config/sql-settings.js';
import type { Logger } from '../../shared/logger.js';
import type { RunControl } from '../../shared/ports/run-control.js';
import type { LogRow, SqlStore } from '../../shared/ports/sql-store.js';
import type { SchedulerConfig } from '../config.js';
import { createSqlLogWriter } from '../../shared/sql/log-writer.js';
import type { RunHost } from './run-host.js';
import { RunSync, type RunSyncDeps } from './run-sync.js';
import { schedulerIdFor } from './scheduler-id.js';

/** The scheduler's link to the master: the SQL store, run commands, the failure log. */
export interface ControlPlane {
  readonly schedulerId: string;
  readonly store: SqlStore;
  /** For the scheduler's settler (SettlerOptions.onFailure): hands a row on, never waits. */
  readonly logFailure: (row: LogRow) => void;
  /** Starts serving what SQL says on `host` (resolves after the first sync). */
  serve(host: RunHost, frontier?: RunSyncDeps['frontier']): Promise<void>;
  /** Stops following SQL (before the host closes: nothing is started on a closing host). */
  stopServing(): Promise<void>;
  /** Stops the sync, writes the failure log out, closes the store and run control; safe twice. */
  close(): Promise<void>;
}

type ControlPlaneConfig = Pick<
  SchedulerConfig,
  | 'dataDir'
  | 'tlsCa'
  | 'sqlUrl'
  | 'sqlCaFile'
  | 'schedulerId'
  | 'frontier'
  | 'amqpUrl'
  | 'runControlExchange'
  | 'runSyncIntervalMs'
  | 'runHeartbeatMs'
>;

/**
 * Opens the control plane of a scheduler: the SQL store (`sqlUrl`, else SQLite in the data dir,
 * the master's default too), run commands over RabbitMQ when the frontier is RabbitMQ (the
 * cluster's broker) and in-process otherwise (one machine: the periodic sync reads SQL), and this
 * scheduler's id (stable per data dir).
 */
export async function openControlPlane(config: ControlPlaneConfig, logger: Logger): Promise<ControlPlane> {
  const schedulerId = schedulerIdFor(config.schedulerId, config.dataDir);
  const store = await openSqlStore(config.sqlUrl ?? defaultSqlStoreUrl(config.dataDir), {
    logger: logger.child({ module: 'sql' }),
    ...(config.sqlCaFile ? { caFile: config.sqlCaFile } : {}),
  });
  let control: RunControl;
  try {
    control = await openRunControl(
      {
        rabbitmq: config.frontier === 'rabbitmq',
        amqpUrl: config.amqpUrl,
        runControlExchange: config.runControlExchange,
        tlsCa: config.tlsCa,
      },
      logger,
    );
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  const failures = createSqlLogWriter(store, { logger: logger.child({ module: 'failure-log' }) });
  let sync: RunSync | null = null;
  let closing: Promise<void> | null = null;
  return {
    schedulerId,
    store,
    logFailure: (row) => failures.add(row),
    async serve(host, frontier) {
      sync = new RunSync({
        ...(frontier ? { frontier } : {}),
        store,
        control,
        host,
        schedulerId,
        logger: logger.child({ module: 'run-sync', schedulerId }),
        syncIntervalMs: config.runSyncIntervalMs,
        reportIntervalMs: config.runHeartbeatMs,
      });
      await sync.start();
    },
    async stopServing() {
      await sync?.close();
    },
    close() {
      return (closing ??= (async () => {
        await sync?.close();
        await failures.close();
        await control.close().catch((err: unknown) => logger.warn({ err }, 'run control close failed'));
        await store.close().catch((err: unknown) => logger.warn({ err }, 'sql store close failed'));
      })());
    },
  };
}
