import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { CRAWLER_PATH } from '../../shared/protocol/crawler-path.js';
import { randomBytes } from 'node:crypto';
import { chromiumProblem, DEFAULT_CHROMIUM_PATH } from '../../shared/config/chromium.js';
import { AppError, errorMessage } from '../../shared/errors.js';
import type { RoleIpcMessage } from '../../shared/protocol/ipc.js';
import type { CrawlPlan } from '../cli/crawl-options.js';
import { envName } from '../../shared/config/load.js';
import { CRAWL_SETTING_KEYS, settingToText, type CrawlSettings } from '../../shared/crawl-settings/index.js';
import { roleScripts } from './role-scripts.js';
import { processScript } from '../../shared/processes/process-script.js';
import { roleProcessEnv, SCHEDULER_NODE_FLAGS } from '../../shared/processes/node-flags.js';
import { toErrorCode } from '../../shared/error-codes/index.js';
import { supervisionConfigSchema } from '../../shared/processes/supervision-config.js';
import { takeHostCrawlers, type HostCrawlers } from '../../shared/processes/host-crawlers.js';
import { loadConfig } from '../../shared/config/load.js';
import { createLogger } from '../../shared/logger.js';

export interface EmbeddedCrawlHooks {
  onProgress?: (progress: Record<string, number>) => void;
  /** Where child processes' log lines go: 'inherit' shows them, 'ignore' hides them. */
  childStderr?: 'inherit' | 'ignore';
}

export interface EmbeddedCrawlResult {
  summary: Record<string, number>;
  /**
   * Set when the crawl stopped at its `maxDurationMs` before every accepted URL was settled: the
   * limit and the frontier's counters once what was in flight was settled (the summary is then the
   * last progress). The URLs left stay queued in the output folder.
   */
  stopped?: { timeLimitMs: number; stats: Record<string, number> };
}

export function rendersAnything(settings: Pick<CrawlSettings, 'render' | 'renderHosts'>): boolean {
  return settings.render === 'always' || settings.renderHosts.length > 0;
}

/**
 * Environment for the roles, from the plan: the same ACKCRAWL_<KEY> names as a deployment uses.
 * Every crawl setting is written out (the plan already holds the user's variables under its flags).
 */
function roleEnv(plan: CrawlPlan, token: string): NodeJS.ProcessEnv {
  const settings: NodeJS.ProcessEnv = {};
  for (const key of CRAWL_SETTING_KEYS) {
    // The time limit is kept here, where the crawl's lifetime is (see runEmbeddedCrawl).
    if (key === 'maxDurationMs') continue;
    const value = plan.settings[key];
    if (value !== undefined) settings[envName(key)] = settingToText(key, value);
  }
  return {
    ...process.env,
    ...settings,
    ACKCRAWL_TOKEN: token,
    ACKCRAWL_LOG_LEVEL: plan.verbose ? 'info' : 'warn',
    ACKCRAWL_OUT_DIR: plan.outDir,
    // The crawl's state lives with its output (the agent's pid file among it), not in the cwd: two
    // crawls into different folders never see each other's crawlers as orphans.
    ACKCRAWL_DATA_DIR: plan.outDir,
    ACKCRAWL_GZIP: String(plan.gzip),
    ACKCRAWL_EXIT_WHEN_DONE: 'true',
    ACKCRAWL_FRONTIER: 'sqlite',
    ACKCRAWL_SINK: 'file',
    ACKCRAWL_LISTEN_HOST: '127.0.0.1',
    ACKCRAWL_LISTEN_PORT: '0',
    ACKCRAWL_PROCESSES: String(plan.processes),
    ACKCRAWL_CONCURRENCY: String(plan.concurrency),
    // Render-capable crawlers only when the job renders anything: they start a browser.
    ACKCRAWL_RENDER_PROCESSES: String(rendersAnything(plan.settings) ? plan.renderProcesses : 0),
    // The embedded crawl's agent is its own: it does not join a fleet (ACKCRAWL_MASTER_URL may be
    // set for `ackcrawl jobs`).
    ACKCRAWL_MASTER_URL: undefined,
  };
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Every role on this machine, as the real processes: a scheduler (SQLite frontier, file sink,
 * WebSocket on loopback with a one-time token) and an agent that keeps the crawler processes
 * running. Resolves with the scheduler's summary once every accepted URL is settled.
 */
export async function runEmbeddedCrawl(
  plan: CrawlPlan,
  hooks: EmbeddedCrawlHooks = {},
): Promise<EmbeddedCrawlResult> {
  if (rendersAnything(plan.settings)) {
    const problem = chromiumProblem(process.env.ACKCRAWL_CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH);
    if (problem) throw new AppError('CHROMIUM_MISSING', problem);
  }
  const token = randomBytes(24).toString('hex');
  const env = roleEnv(plan, token);
  const stderr = hooks.childStderr ?? 'inherit';
  // The scheduler's port is bound here and handed down, so the crawlers start at once, beside the
  // scheduler instead of after it: what they send before it is ready waits in the backlog.
  const listener = await listenOnLoopback();
  const schedulerUrl = `ws://127.0.0.1:${(listener.address() as AddressInfo).port}${CRAWLER_PATH}`;
  let scheduler: ChildProcess;
  try {
    scheduler = fork(processScript(roleScripts.scheduler), [], {
      env: roleProcessEnv({ ...env, ACKCRAWL_LISTEN_FD: String(LISTEN_FD) }),
      stdio: ['ignore', 'ignore', stderr, 'ipc', listenerFd(listener)],
      execArgv: [...SCHEDULER_NODE_FLAGS],
    });
  } finally {
    // The scheduler has its copy of the socket; this process must never accept on it.
    listener.close();
  }
  // The agent's part runs in this process: it keeps the crawler processes (restarts a killed one,
  // stops them at the end) as `ackcrawl agent` does, without a process of its own to start and
  // to hold memory.
  let fatal: AppError | null = null;
  const crawlers = startCrawlers({ ...env, ACKCRAWL_SCHEDULER_URL: schedulerUrl });
  crawlers.catch((err: unknown) => {
    scheduler.kill('SIGTERM');
    fatal ??=
      err instanceof AppError
        ? err
        : new AppError('CRAWLERS_FAILED', `the crawlers could not start: ${errorMessage(err)}`);
  });
  const stopCrawlers = async (): Promise<void> => {
    await (await crawlers.catch(() => null))?.stop();
  };
  const forward = (signal: NodeJS.Signals): void => {
    scheduler.kill('SIGTERM');
    void stopCrawlers();
    process.exitCode = signal === 'SIGINT' ? 130 : 143;
  };
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  // At its time limit the crawl stops as on Ctrl-C: the scheduler drains the crawlers, makes what
  // they finished durable and exits; what is left stays queued in the output folder.
  const limitMs = plan.settings.maxDurationMs;
  let timedOut = false;
  let lastProgress: Record<string, number> = {};
  let stoppedStats: Record<string, number> = {};
  const limit =
    limitMs > 0
      ? setTimeout(() => {
          timedOut = true;
          scheduler.kill('SIGTERM');
          void stopCrawlers();
        }, limitMs)
      : null;
  try {
    const ended = await new Promise<EmbeddedCrawlResult>((resolve, reject) => {
      let result: Record<string, number> | null = null;
      scheduler.on('message', (message: RoleIpcMessage) => {
        switch (message.type) {
          case 'listening':
            return;
          case 'progress':
            lastProgress = message.progress;
            hooks.onProgress?.(message.progress);
            return;
          case 'stopped':
            stoppedStats = message.stats;
            return;
          case 'done':
            result = message.summary;
            // Every accepted URL is settled: the crawlers stop now, before the scheduler closes
            // their connections, instead of trying to reconnect to it (and logging each refusal).
            void stopCrawlers();
            return;
          case 'fatal':
            fatal = new AppError(toErrorCode(message.code, 'SCHEDULER_FAILED'), message.message);
            return;
        }
      });
      scheduler.once('exit', (code, signal) => {
        if (result) resolve({ summary: result });
        else if (fatal) reject(fatal);
        else if (timedOut && code === 0)
          resolve({ summary: lastProgress, stopped: { timeLimitMs: limitMs, stats: stoppedStats } });
        else
          reject(
            new AppError(
              'SCHEDULER_EXITED',
              `the scheduler stopped before the crawl completed (exit ${code ?? signal}); run the same command again to resume`,
            ),
          );
      });
    });
    await stopCrawlers();
    return ended;
  } finally {
    if (limit) clearTimeout(limit);
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    await stopCrawlers();
    if (scheduler.exitCode === null && scheduler.signalCode === null) {
      scheduler.kill('SIGTERM');
      await exited(scheduler);
    }
  }
}

/** The scheduler's descriptor in its child: stdin, stdout, stderr, the IPC channel, then this. */
const LISTEN_FD = 4;

function listenOnLoopback(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * The descriptor of a listening server, to pass in a child's stdio. Node documents no accessor for
 * it; the TCP handle's `fd` has been there on every Unix since Node 0.x. Windows has none.
 */
function listenerFd(server: Server): number {
  const fd = (server as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    throw new AppError(
      'SCHEDULER_FAILED',
      'cannot hand the listening socket to the scheduler on this platform',
    );
  }
  return fd;
}

/** The agent's part of an embedded crawl: its crawler processes, started. */
async function startCrawlers(env: NodeJS.ProcessEnv): Promise<HostCrawlers> {
  const config = loadConfig(supervisionConfigSchema, env);
  const crawlers = await takeHostCrawlers(
    config,
    env,
    createLogger({ name: 'agent', level: config.logLevel }),
  );
  crawlers.manager.scale(config.processes);
  return crawlers;
}
