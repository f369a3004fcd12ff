import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { roleScripts } from '../../embedded/role-scripts.js';
import { processScript } from '../../../shared/processes/process-script.js';
import { roleProcessEnv, SCHEDULER_NODE_FLAGS } from '../../../shared/processes/node-flags.js';
import type { RoleIpcMessage } from '../../../shared/protocol/ipc.js';
import { RoleProcess } from './role-process.js';
import { serveEnv, type ServeOptions } from './serve-env.js';

/** How long a role has to stop on SIGTERM before it is killed (past the crawlers' drain). */
const KILL_AFTER_MS = 30_000;

function say(line: string): void {
  process.stdout.write(`ackcrawl serve: ${line}\n`);
}

/**
 * `ackcrawl serve`: master, scheduler and an agent with its crawler processes on this machine, as
 * the real role processes. State lives in the data dir (runs in SQLite, URLs in the SQLite
 * frontier, records in files), so the same command after a kill -9 goes on where it was. A role
 * that crashes is started again (with backoff); SIGINT or SIGTERM stops them all, agent first.
 */
export async function serve(options: ServeOptions): Promise<void> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const base = serveEnv(options);
  // The roles log at warn unless --verbose; what they say goes to this terminal.
  const stderr = 'inherit';
  const restartDelayMs = Number(base.ACKCRAWL_SERVE_RESTART_DELAY_MS ?? 1_000) || 1_000;
  let schedulerUrl: string | null = null;
  let masterUrl: string | null = null;
  const crashed =
    (name: string) =>
    ({ code, signal, restartInMs }: { code: number | null; signal: string | null; restartInMs: number }) =>
      process.stderr.write(
        `ackcrawl serve: the ${name} stopped (exit ${code ?? signal}); starting it again in ${restartInMs} ms\n`,
      );
  const fatal = (name: string) => (message: RoleIpcMessage) => {
    if (message.type === 'fatal') process.stderr.write(`ackcrawl serve: ${name}: ${message.message}\n`);
  };

  const agent = new RoleProcess({
    name: 'agent',
    script: roleScripts.agent,
    // The agent registers with this master (its agent token is in the shared data dir).
    env: () => ({
      ...base,
      ACKCRAWL_SCHEDULER_URL: schedulerUrl ?? '',
      ACKCRAWL_MASTER_URL: masterUrl ?? '',
    }),
    ipc: false,
    stderr,
    restartDelayMs,
    onCrash: crashed('agent'),
  });
  const scheduler = new RoleProcess({
    name: 'scheduler',
    script: processScript(roleScripts.scheduler),
    env: () => roleProcessEnv(base),
    ipc: true,
    execArgv: [...SCHEDULER_NODE_FLAGS],
    stderr,
    restartDelayMs,
    onCrash: crashed('scheduler'),
    onMessage: (message) => {
      fatal('scheduler')(message);
      if (message.type !== 'listening') return;
      const changed = schedulerUrl !== null && schedulerUrl !== message.url;
      schedulerUrl = message.url;
      if (!agent.running) agent.start();
      // A scheduler back on another port: the crawlers must be told where.
      else if (changed) void agent.restart(KILL_AFTER_MS);
    },
  });
  let announced = false;
  const master = new RoleProcess({
    name: 'master',
    script: roleScripts.master,
    env: () => base,
    ipc: true,
    stdout: process.stdout,
    stderr,
    restartDelayMs,
    onCrash: crashed('master'),
    onMessage: (message) => {
      fatal('master')(message);
      if (message.type !== 'listening') return;
      if (!announced) say(`master listening on ${message.url} (state in ${dataDir})`);
      const moved = masterUrl !== null && masterUrl !== message.url;
      masterUrl = message.url;
      // A master back on another port: the agent must be told where.
      if (moved && agent.running) void agent.restart(KILL_AFTER_MS);
      announced = true;
      if (!scheduler.running) scheduler.start();
    },
  });

  let stopping: Promise<void> | null = null;
  const stop = (signal: NodeJS.Signals): void => {
    stopping ??= (async () => {
      say(`${signal}: stopping`);
      await agent.stop(KILL_AFTER_MS);
      await scheduler.stop(KILL_AFTER_MS);
      await master.stop(KILL_AFTER_MS);
      process.exit(0);
    })();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The master first: it migrates the store and makes the admin token before a scheduler reads SQL.
  master.start();
  await new Promise<never>(() => undefined);
}
