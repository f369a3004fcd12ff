import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** One line of /proc/<pid>/stat, the fields the agent and the benchmark need. Linux only. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** R, S, D, T (stopped), Z (a zombie: exited, not yet reaped), … */
  state: string;
  /** Start time in clock ticks since boot: with pid, it names a process even if the pid is reused. */
  startTicks: number;
  /** utime + stime of the process itself, in clock ticks. */
  cpuTicks: number;
  /** cutime + cstime: CPU of children this process has already waited for, in clock ticks. */
  reapedChildTicks: number;
  rssPages: number;
}

/** Read once at start: running `getconf` later would itself show up as reaped child CPU. */
export const clockTicksPerSecond = getconf('CLK_TCK', 100);
export const pageSizeBytes = getconf('PAGESIZE', 4096);

function getconf(name: string, fallback: number): number {
  try {
    const value = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : fallback;
  } catch {
    return fallback;
  }
}

export function readProcStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined; // exited between listing and reading
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const field = (n: number): number => Number(fields[n - 3]);
  return {
    pid: Number(text.slice(0, text.indexOf(' '))),
    ppid: field(4),
    state: fields[0] ?? '',
    startTicks: field(22),
    cpuTicks: field(14) + field(15),
    reapedChildTicks: field(16) + field(17),
    rssPages: field(24),
  };
}

export function readAllProcStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) out.push(stat);
  }
  return out;
}
