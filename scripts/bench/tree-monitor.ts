import { processLabel } from './process-label.js';
import { readPssBytes } from './proc-pss.js';
import {
  clockTicksPerSecond,
  pageSizeBytes,
  readAllProcStats,
  readProcStat,
  type ProcStat,
} from './proc-stat.js';

/** One process of the tree over the whole run. */
export interface ProcessUsage {
  pid: number;
  /** Its script and subcommand (process-label.ts), read when it was first seen. */
  label: string;
  cpuSeconds: number;
  peakRssBytes: number;
  /** Its RSS at the sample where the tree's sum peaked: the tree's peak, split by process. */
  rssAtTreePeakBytes: number;
}

export interface TreeUsage {
  /** Sum over every process ever seen in the tree of its largest sampled utime+stime. */
  sampledCpuSeconds: number;
  /** Largest sum of RSS over the tree's live processes at one sample. */
  peakRssBytes: number;
  /**
   * Largest sum of PSS over the tree's live processes at one sample (proc-pss.ts): shared pages
   * counted once, as the machine holds them. Null when /proc gave no PSS.
   */
  peakPssBytes: number | null;
  /** Most processes alive in the tree at one sample. */
  peakProcesses: number;
  samples: number;
  /** Every process seen, in the order first seen. */
  processes: ProcessUsage[];
}

export interface TreeMonitor {
  /**
   * Takes a last sample and stops. Processes that exited since the last sample (the root included,
   * once reaped) keep their last sampled figures; see {@link TreeUsage.sampledCpuSeconds}.
   */
  stop(): TreeUsage;
}

/**
 * Samples one or more process trees from /proc every `intervalMs`. A process that exits between
 * samples loses at most one interval of CPU here; the caller adds the exact figure for reaped
 * children (cutime) and keeps the larger. Processes stay members once seen, so reparented orphans
 * are still counted. CPU is cumulative since each process started, so a root that was running
 * before the monitor (a cluster's scheduler) counts its start-up too.
 */
export function startTreeMonitor(rootPids: number | readonly number[], intervalMs = 200): TreeMonitor {
  const roots = new Set(typeof rootPids === 'number' ? [rootPids] : rootPids);
  const members = new Set<string>(); // `${pid}:${startTicks}`
  const maxTicks = new Map<string, number>();
  const perProcess = new Map<string, { pid: number; label: string; peakRssPages: number; atPeak: number }>();
  let peakRssPages = 0;
  let peakPssBytes: number | null = null;
  let peakProcesses = 0;
  let samples = 0;

  const sample = (): void => {
    const all = readAllProcStats();
    const children = new Map<number, ProcStat[]>();
    for (const p of all) {
      const siblings = children.get(p.ppid);
      if (siblings) siblings.push(p);
      else children.set(p.ppid, [p]);
    }
    const live = new Map<number, ProcStat>();
    const stack = all.filter((p) => roots.has(p.pid) || members.has(key(p)));
    for (let p = stack.pop(); p; p = stack.pop()) {
      if (live.has(p.pid)) continue;
      live.set(p.pid, p);
      members.add(key(p));
      stack.push(...(children.get(p.pid) ?? []));
    }
    let rss = 0;
    let pss: number | null = 0;
    for (const p of live.values()) {
      rss += p.rssPages;
      const own = readPssBytes(p.pid);
      if (own === undefined) {
        // Gone or a zombie since the listing: it holds no memory. Alive and unreadable: no sum.
        const now = readProcStat(p.pid);
        if (now !== undefined && now.state !== 'Z') pss = null;
      } else if (pss !== null) pss += own;
      maxTicks.set(key(p), Math.max(maxTicks.get(key(p)) ?? 0, p.cpuTicks));
      let one = perProcess.get(key(p));
      if (!one)
        perProcess.set(
          key(p),
          (one = { pid: p.pid, label: processLabel(p.pid), peakRssPages: 0, atPeak: 0 }),
        );
      one.peakRssPages = Math.max(one.peakRssPages, p.rssPages);
    }
    if (rss > peakRssPages) {
      for (const [k, one] of perProcess) {
        const p = live.get(one.pid);
        one.atPeak = p && key(p) === k ? p.rssPages : 0;
      }
    }
    peakRssPages = Math.max(peakRssPages, rss);
    if (pss !== null) peakPssBytes = Math.max(peakPssBytes ?? 0, pss);
    peakProcesses = Math.max(peakProcesses, live.size);
    samples++;
  };

  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      let ticks = 0;
      for (const t of maxTicks.values()) ticks += t;
      return {
        sampledCpuSeconds: ticks / clockTicksPerSecond,
        peakRssBytes: peakRssPages * pageSizeBytes,
        peakPssBytes,
        peakProcesses,
        samples,
        processes: [...perProcess].map(([k, one]) => ({
          pid: one.pid,
          label: one.label,
          cpuSeconds: (maxTicks.get(k) ?? 0) / clockTicksPerSecond,
          peakRssBytes: one.peakRssPages * pageSizeBytes,
          rssAtTreePeakBytes: one.atPeak * pageSizeBytes,
        })),
      };
    },
  };
}

function key(p: ProcStat): string {
  return `${p.pid}:${p.startTicks}`;
}
