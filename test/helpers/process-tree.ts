import { readdirSync, readFileSync } from 'node:fs';

interface Proc {
  pid: number;
  ppid: number;
  cmdline: string;
}

function listProcs(): Proc[] {
  const procs: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      procs.push({ pid: Number(name), ppid, cmdline });
    } catch {
      // exited meanwhile
    }
  }
  return procs;
}

/** The descendants of `root` (not root itself), with their command lines. */
export function descendants(root: number): Proc[] {
  const procs = listProcs();
  const out: Proc[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const p of procs) {
      if (p.ppid === parent) {
        out.push(p);
        frontier.push(p.pid);
      }
    }
  }
  return out;
}

/** PIDs of crawler processes under `root`. */
export function crawlerPids(root: number): number[] {
  return descendants(root)
    .filter((p) => p.cmdline.includes('client/crawler/main.js'))
    .map((p) => p.pid);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
