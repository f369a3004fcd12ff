import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.js';
import { acquireAgentLock, type AgentLock } from './agent-lock.js';
import { killAfterMs, type SupervisionConfig } from './supervision-config.js';
import { cleanOrphans, pidFilePath, writePids } from './pid-file.js';
import { ProcessManager } from './process-manager.js';
import { nodeSpawner } from './spawner.js';
import { processScript } from './process-script.js';

// A path, not an import: shared/ never imports a role.
const CRAWLER_SCRIPT = processScript(fileURLToPath(new URL('../../client/crawler/main.js', import.meta.url)));

/** What an orphaned crawler of a previous agent gets after SIGTERM before SIGKILL. */
const ORPHAN_GRACE_MS = 2_000;

/** A host's crawler processes, kept by one agent: the lock on its id, the pid file, the manager. */
export interface HostCrawlers {
  agentId: string;
  manager: ProcessManager;
  lock: AgentLock;
  /** SIGTERM to a crawler, then SIGKILL after this. */
  stopTimeoutMs: number;
  /** Drains every crawler (SIGKILL past the deadline), then releases the lock. */
  stop(): Promise<void>;
}

/**
 * Takes this host's crawlers in hand, as `ackcrawl agent` does and as the embedded crawl does in
 * its own process: locks the agent id (a second live agent with it exits with AGENT_ID_IN_USE),
 * stops the orphans a killed agent left (its pid file), and builds the process manager that keeps
 * the crawler processes running, recording their pids as they change. Starts none: the caller
 * scales it.
 *
 * Crawlers get `env` with the data dir made absolute and the scheduler's token, never the fleet's
 * or an admin's credentials: a crawler parses hostile pages.
 */
export async function takeHostCrawlers(
  config: Readonly<SupervisionConfig>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<HostCrawlers> {
  const agentId = config.agentId ?? `${hostname().replace(/[^A-Za-z0-9._-]/g, '-')}-${config.agentPort}`;
  // Before the orphans are read: a second live agent with this id would take the first one's crawlers for them.
  const lock = acquireAgentLock(config.dataDir, agentId);
  const pidFile = pidFilePath(config.dataDir, agentId);
  const cleaned = await cleanOrphans(pidFile, ORPHAN_GRACE_MS, logger);
  if (cleaned.length > 0) logger.info({ pids: cleaned }, 'orphaned crawlers of a previous agent stopped');
  // A token from the token file is read by each crawler as it starts, so a new one is picked up.
  const crawlerEnv: NodeJS.ProcessEnv = {
    ...env,
    ACKCRAWL_DATA_DIR: resolve(config.dataDir),
    ...(config.token ? { ACKCRAWL_TOKEN: config.token } : {}),
  };
  delete crawlerEnv.ACKCRAWL_AGENT_TOKEN;
  delete crawlerEnv.ACKCRAWL_ADMIN_TOKEN;
  const stopTimeoutMs = killAfterMs(config);
  let manager: ProcessManager | null = null;
  const recordPids = (): void => {
    try {
      if (manager) writePids(pidFile, manager.pids());
    } catch (err) {
      logger.warn({ err, pidFile }, 'could not record crawler pids');
    }
  };
  manager = new ProcessManager({
    spawn: nodeSpawner(CRAWLER_SCRIPT, crawlerEnv, `${hostname()}-${process.pid}`),
    logger,
    stopTimeoutMs,
    crashLoopCrashes: config.crashLoopCrashes,
    crashLoopWindowMs: config.crashLoopWindowMs,
    crashLoopMinUptimeMs: config.crashLoopMinUptimeMs,
    restartBackoffMs: config.restartBackoffMs,
    renderProcesses: config.renderProcesses,
    onChange: recordPids,
  });
  const processes = manager;
  let stopping: Promise<void> | null = null;
  return {
    agentId,
    manager: processes,
    lock,
    stopTimeoutMs,
    stop: () =>
      (stopping ??= (async () => {
        await processes.stop();
        lock.release();
      })()),
  };
}
