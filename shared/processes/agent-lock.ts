import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
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
    return null; // gone, or garbled
  }
}

const isAlive = (h: Holder): boolean => {
  const stat = readProcStat(h.pid);
  return stat !== undefined && stat.startTicks === h.startTicks && stat.state !== 'Z';
};

/**
 * Creates `path` with `text` in it, whole, unless it exists: written to a file of this process
 * first, then hard-linked into place (link never replaces a file). False when `path` exists.
 */
function createWhole(path: string, text: string): boolean {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text, { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // The folder went with the last agent's lock this instant (removeAgentFile): make it again.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(temp, text, { mode: 0o600 });
  }
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    rmSync(temp, { force: true });
  }
}

const pause = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

const sameHolder = (a: Holder | null, b: Holder | null): boolean =>
  a === b || (a !== null && b !== null && a.pid === b.pid && a.startTicks === b.startTicks);

/** A takeover lock older than this was left by an agent killed in the middle of one (microseconds). */
const STALE_TAKEOVER_MS = 10_000;

/**
 * Removes the lock file if it still holds `seen`, the stale holder the caller read. Under a
 * second lock (`<lock>.takeover`), so that two agents that both read the same stale holder cannot
 * both remove it: the second would remove the lock the first has just taken, and both would run.
 * Whoever does not get the takeover lock waits a moment and reads the lock file again.
 */
function removeStale(path: string, seen: Holder | null): void {
  const takeover = `${path}.takeover`;
  let fd: number;
  try {
    fd = openSync(takeover, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = Date.now() - (statSync(takeover, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_TAKEOVER_MS) rmSync(takeover, { force: true });
    else pause(10);
    return;
  }
  try {
    if (sameHolder(readHolder(path), seen)) rmSync(path, { force: true });
  } finally {
    closeSync(fd);
    rmSync(takeover, { force: true });
  }
}

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
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createWhole(path, `${JSON.stringify(me)}\n`)) {
      return {
        release: () => {
          const holder = readHolder(path);
          if (!holder || holder.pid !== me.pid || holder.startTicks !== me.startTicks) return;
          // An agent that stopped cleanly leaves nothing behind (as its pid file does).
          removeAgentFile(path);
        },
      };
    }
    const holder = readHolder(path);
    if (holder && isAlive(holder) && holder.pid !== process.pid) {
      throw new AppError(
        'AGENT_ID_IN_USE',
        `another agent (pid ${holder.pid}) runs with id ${agentId} on ${resolve(dataDir)}; give this one its own ACKCRAWL_AGENT_ID or ACKCRAWL_DATA_DIR`,
        { details: { agentId, pid: holder.pid, lock: path } },
      );
    }
    // Dead, reused pid, or garbled (the file is never seen half written: createWhole).
    removeStale(path, holder);
  }
  throw new AppError(
    'AGENT_ID_IN_USE',
    `could not take the agent lock ${path}: other agents keep taking it`,
    {
      details: { agentId, lock: path },
    },
  );
}
