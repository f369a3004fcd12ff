import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { AppError } from '../errors.js';
import { readProcStat } from '../os/proc-stat.js';
import { removeAgentFile } from './pid-file.js';

interface Holder {
  pid: number;
  startTicks: number;
}

/** `<dataDir>/agents/<id>.lock`, beside the agent's pid file. */
export function agentLockPath(dataDir: string, agentId: string): string {
  return join(resolve(dataDir), 'agents', `${agentId.replace(/[^A-Za-z0-9._-]/g, '_')}.lock`);
}

function readHolder(path: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return Number.isSafeInteger(parsed.pid) && Number.isSafeInteger(parsed.startTicks)
      ? { pid: parsed.pid as number, startTicks: parsed.startTicks as number }
      : null;
  } catch {
    return null; // gone, or half written by a holder killed while writing it
  }
}

const isAlive = (h: Holder): boolean => {
  const stat = readProcStat(h.pid);
  return stat !== undefined && stat.startTicks === h.startTicks && stat.state !== 'Z';
};

export interface AgentLock {
  /** Removes the lock file if it is still this process's, and the agents/ folder if it is empty then. */
  release(): void;
}

/**
 * One agent per id and data dir. The agent's pid file names the crawlers it started, and a
 * starting agent stops those it finds still running as orphans of its previous life: a second
 * live agent with the same id would stop the first one's crawlers, and each would keep starting
 * them again. The lock file names its holder by pid and start time (so a reused pid is not taken
 * for it); a holder that is gone (kill -9, a crash) leaves a stale lock, which the next agent takes.
 * Throws AGENT_ID_IN_USE while the holder lives.
 */
export function acquireAgentLock(dataDir: string, agentId: string): AgentLock {
  const path = agentLockPath(dataDir, agentId);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const self = readProcStat('self');
  const me: Holder = { pid: process.pid, startTicks: self?.startTicks ?? 0 };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(path);
      if (holder && isAlive(holder) && holder.pid !== process.pid) {
        throw new AppError(
          'AGENT_ID_IN_USE',
          `another agent (pid ${holder.pid}) runs with id ${agentId} on ${resolve(dataDir)}; give this one its own ACKCRAWL_AGENT_ID or ACKCRAWL_DATA_DIR`,
          { details: { agentId, pid: holder.pid, lock: path } },
        );
      }
      // Unreadable: its holder may be writing it this instant; a fresh read a moment later decides.
      if (holder === null && attempt === 0) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        continue;
      }
      rmSync(path, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    return {
      release: () => {
        const holder = readHolder(path);
        if (!holder || holder.pid !== me.pid || holder.startTicks !== me.startTicks) return;
        // An agent that stopped cleanly leaves nothing behind (as its pid file does).
        removeAgentFile(path);
      },
    };
  }
  throw new AppError(
    'AGENT_ID_IN_USE',
    `could not take the agent lock ${path}: other agents keep taking it`,
    {
      details: { agentId, lock: path },
    },
  );
}
