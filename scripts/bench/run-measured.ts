import { spawn } from 'node:child_process';
import { clockTicksPerSecond, readProcStat } from './proc-stat.js';
import { startTreeMonitor, type ProcessUsage } from './tree-monitor.js';

export interface MeasuredRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  wallSeconds: number;
  /** The larger of the sampled and the reaped figure: both are lower bounds, for different reasons. */
  cpuSeconds: number;
  sampledCpuSeconds: number;
  /** Exact CPU of every process of the tree that was waited for, read from our own cutime+cstime. */
  reapedCpuSeconds: number;
  peakRssBytes: number;
  /** The tree's peak sum of PSS (shared pages counted once); null where /proc has none. */
  peakPssBytes: number | null;
  peakProcesses: number;
  /** Each process of the tree: its CPU, its peak RSS and its share of the tree's peak. */
  processes: ProcessUsage[];
  /** The last stdout line that parses as a JSON object. */
  summary: Record<string, unknown> | undefined;
  stderrTail: string;
}

export interface MeasuredCommand {
  command: string;
  args: string[];
  timeoutMs: number;
  /** Pass the child's stderr through instead of keeping only its tail. */
  inheritStderr?: boolean;
  env?: NodeJS.ProcessEnv;
  /**
   * Running processes whose trees count in the figures with the command's (a cluster's scheduler
   * and agent, which the command only talks to). Their CPU is their whole life up to the end of the
   * command; they are not waited for, so the reaped figure covers the command alone.
   */
  alsoMonitor?: readonly number[];
}

/**
 * Runs one command as a child process tree and measures wall time, CPU and peak RSS of the whole
 * tree. Run one at a time: the reaped-CPU figure is the change in this process's cutime+cstime,
 * which would mix two children run together.
 */
export async function runMeasured(cmd: MeasuredCommand): Promise<MeasuredRun> {
  const reapedBefore = readProcStat('self')?.reapedChildTicks ?? 0;
  const startedAt = performance.now();
  const child = spawn(cmd.command, cmd.args, {
    stdio: ['ignore', 'pipe', cmd.inheritStderr ? 'inherit' : 'pipe'],
    ...(cmd.env ? { env: cmd.env } : {}),
  });
  if (child.pid === undefined) throw new Error(`could not start ${cmd.command}`);
  const monitor = startTreeMonitor([child.pid, ...(cmd.alsoMonitor ?? [])]);
  let stdout = '';
  let stderrTail = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout = (stdout + chunk).slice(-65_536);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-4_096);
  });

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  }, cmd.timeoutMs);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (code, sig) => resolve([code, sig])),
  );
  clearTimeout(timer);
  const wallSeconds = (performance.now() - startedAt) / 1000;
  const usage = monitor.stop();
  const reapedTicks = (readProcStat('self')?.reapedChildTicks ?? 0) - reapedBefore;
  const reapedCpuSeconds = reapedTicks / clockTicksPerSecond;
  return {
    exitCode,
    signal,
    timedOut,
    wallSeconds,
    cpuSeconds: Math.max(usage.sampledCpuSeconds, reapedCpuSeconds),
    sampledCpuSeconds: usage.sampledCpuSeconds,
    reapedCpuSeconds,
    peakRssBytes: usage.peakRssBytes,
    peakPssBytes: usage.peakPssBytes,
    peakProcesses: usage.peakProcesses,
    processes: usage.processes,
    summary: lastJsonObject(stdout),
    stderrTail,
  };
}

function lastJsonObject(text: string): Record<string, unknown> | undefined {
  const lines = text.trim().split('\n').reverse();
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}
