import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from '../files/atomic-write.js';
import type { Logger } from '../logger.js';
import { readProcStat } from '../os/proc-stat.js';

interface Entry {
  pid: number;
  /** Start time in clock ticks since boot: with the pid, it names the process even after pid reuse. */
  startTicks: number;
}

/** Where an agent keeps the pids of the crawlers it started: `<dataDir>/agents/<id>.pids.json`. */
export function pidFilePath(dataDir: string, agentId: string): string {
  return join(resolve(dataDir), 'agents', `${agentId.replace(/[^A-Za-z0-9._-]/g, '_')}.pids.json`);
}

/**
 * Rewrites the file with the crawlers running now (atomically). With none, the file goes (and its
 * folder, when empty): an agent that stopped cleanly leaves nothing behind.
 */
export function writePids(path: string, pids: readonly number[]): void {
  const entries: Entry[] = pids.flatMap((pid) => {
    const stat = readProcStat(pid);
    return stat ? [{ pid, startTicks: stat.startTicks }] : [];
  });
  if (entries.length === 0) {
    removeAgentFile(path);
    return;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomic(path, `${JSON.stringify(entries)}\n`);
}

/** Removes a file of `<dataDir>/agents/`, and that folder when nothing else is left in it. */
export function removeAgentFile(path: string): void {
  rmSync(path, { force: true });
  try {
    if (readdirSync(dirname(path)).length === 0) rmdirSync(dirname(path));
  } catch {
    // the folder is gone already, or another agent's file appeared in it
  }
}

function readEntries(path: string): Entry[] {
  if (!existsSync(path)) return [];
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return Array.isArray(parsed)
      ? parsed.filter(
          (e): e is Entry =>
            typeof e === 'object' &&
            e !== null &&
            Number.isSafeInteger((e as Entry).pid) &&
            Number.isSafeInteger((e as Entry).startTicks),
        )
      : [];
  } catch {
    return [];
  }
}

const alive = (e: Entry): boolean => {
  const stat = readProcStat(e.pid);
  return stat !== undefined && stat.startTicks === e.startTicks && stat.state !== 'Z';
};

/**
 * After the agent's own restart: the crawlers of its previous life that are still running (same
 * pid and start time as recorded; a SIGSTOPped one, say) get SIGTERM, then SIGKILL after
 * `graceMs`. Their tasks go back to the queue when their sockets close. Returns the pids cleaned.
 */
export async function cleanOrphans(path: string, graceMs: number, logger: Logger): Promise<number[]> {
  const orphans = readEntries(path).filter(alive);
  if (orphans.length === 0) return [];
  logger.warn({ pids: orphans.map((o) => o.pid) }, 'crawlers of a previous agent still run; stopping them');
  for (const o of orphans) signal(o.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && orphans.some(alive)) await new Promise((r) => setTimeout(r, 100));
  for (const o of orphans.filter(alive)) signal(o.pid, 'SIGKILL');
  const killDeadline = Date.now() + graceMs;
  while (Date.now() < killDeadline && orphans.some(alive)) await new Promise((r) => setTimeout(r, 50));
  return orphans.map((o) => o.pid);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}
