import { round } from './report.js';
import { clockTicksPerSecond, readProcStat } from './proc-stat.js';

/**
 * Marks the site process's CPU now; the function returned gives the CPU-seconds it used since, or
 * null when its /proc entry could not be read. The site is not part of any runner's tree, but it
 * shares the machine's cores with them: a run's whole cost on the machine is the tree's CPU, the
 * services' and the site's.
 */
export function markSiteCpu(pid: number): () => number | null {
  const before = readProcStat(pid)?.cpuTicks;
  return () => {
    const after = readProcStat(pid)?.cpuTicks;
    return before === undefined || after === undefined
      ? null
      : round((after - before) / clockTicksPerSecond, 2);
  };
}
