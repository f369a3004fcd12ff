import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

export interface ServeOptions {
  /** Where every role keeps its state (SQL store, frontier, records, tokens). */
  dataDir: string;
  /** Crawler processes under the agent (ACKCRAWL_PROCESSES unless given). */
  processes?: string;
  verbose: boolean;
}

/**
 * The environment of the roles `ackcrawl serve` runs: one data dir for all of them, so the
 * scheduler finds the master's SQLite store at its default place (`<dataDir>/ackcrawl.db`) and
 * the agent the scheduler's token; embedded defaults (SQLite frontier, record files, run commands
 * inside the master) unless the environment says otherwise. Every other `ACKCRAWL_*` variable
 * (ACKCRAWL_MASTER_PORT, ACKCRAWL_ADMIN_TOKEN, ACKCRAWL_LISTEN_PORT, …) reaches the role that
 * reads it as it is.
 */
export function serveEnv(options: ServeOptions, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const dataDir = resolve(options.dataDir);
  const frontier = env.ACKCRAWL_FRONTIER || 'sqlite';
  return {
    ACKCRAWL_LOG_LEVEL: options.verbose ? 'info' : 'warn',
    ACKCRAWL_FRONTIER: frontier,
    ACKCRAWL_SINK: 'file',
    ACKCRAWL_OUT_DIR: join(dataDir, 'crawl-output'),
    // The master tells schedulers over RabbitMQ only when they listen there (a RabbitMQ frontier).
    ACKCRAWL_RUN_CONTROL: frontier === 'rabbitmq' ? 'rabbitmq' : 'local',
    // Without a broker between them the scheduler reads SQL often: a command waits at most this.
    ...(frontier === 'rabbitmq' ? {} : { ACKCRAWL_RUN_SYNC_INTERVAL_MS: '500' }),
    // Schedulers report every second and the master expects it: a dead scheduler shows in 3 s.
    ACKCRAWL_RUN_HEARTBEAT_MS: '1000',
    // The agent's API on any free port (it registers the one it got), under one stable id.
    ACKCRAWL_AGENT_PORT: '0',
    ACKCRAWL_AGENT_ID: `serve-${hostname().replace(/[^A-Za-z0-9._-]/g, '-')}`.slice(0, 128),
    ...env,
    ACKCRAWL_DATA_DIR: dataDir,
    ACKCRAWL_SERVE_RUNS: 'true',
    // The master asks the scheduler (why not yet?, a run's hosts) where its scheduler.json says.
    ACKCRAWL_SCHEDULER_OUT_DIR: env.ACKCRAWL_OUT_DIR || join(dataDir, 'crawl-output'),
    ACKCRAWL_EXIT_WHEN_DONE: 'false',
    ...(options.processes ? { ACKCRAWL_PROCESSES: options.processes } : {}),
  };
}
