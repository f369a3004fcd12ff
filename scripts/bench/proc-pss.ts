import { readFileSync } from 'node:fs';

/**
 * A process's proportional set size in bytes (`Pss` of /proc/<pid>/smaps_rollup, Linux ≥ 4.14):
 * its private pages, plus each page it shares divided by the number of processes that map it.
 * Summed over a tree, shared pages (node's own code, mapped by every Node process) count once,
 * where a sum of RSS counts them once per process. Undefined when the process is gone or the file
 * cannot be read (not Linux, an older kernel, another user's process).
 */
export function readPssBytes(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1');
  } catch {
    return undefined;
  }
  const match = /^Pss:\s+(\d+) kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : undefined;
}
