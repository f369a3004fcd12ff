import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths.js';
import { clockTicksPerSecond, readAllProcStats, type ProcStat } from './proc-stat.js';

/** The brokers of the distributed path, as scripts/services.sh names them (PostgreSQL is not used). */
export const BROKER_SERVICES = ['rabbitmq', 'kafka', 'minio'] as const;

/** CPU ticks of every process in each service's tree, by `${pid}:${startTicks}`, root first. */
export type ServiceCpuSnapshot = Map<string, Map<string, number>>;

export interface ServiceCpu {
  totalSeconds: number;
  byService: Record<string, number>;
  /** Services with no live process at either end. */
  missing: string[];
  /** Services whose root process changed in between: someone restarted them during the run. */
  restarted: string[];
}

/**
 * The process tree of each broker, from the PID file scripts/services.sh writes
 * (.services/<name>/<name>.pid: the rabbitmq-server script above beam.smp, Kafka's java, minio).
 */
export function snapshotServiceCpu(): ServiceCpuSnapshot {
  const all = readAllProcStats();
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const snapshot: ServiceCpuSnapshot = new Map();
  for (const name of BROKER_SERVICES) {
    const root = all.find((p) => p.pid === servicePid(name));
    const ticks = new Map<string, number>();
    const stack = root ? [root] : [];
    for (let p = stack.pop(); p; p = stack.pop()) {
      ticks.set(`${p.pid}:${p.startTicks}`, p.cpuTicks);
      stack.push(...(children.get(p.pid) ?? []));
    }
    snapshot.set(name, ticks);
  }
  return snapshot;
}

/**
 * CPU each service spent between two snapshots. A process that started in between counts from
 * zero; one that exited in between is lost, so after a restart the figure is a lower bound.
 */
export function serviceCpuBetween(before: ServiceCpuSnapshot, after: ServiceCpuSnapshot): ServiceCpu {
  const byService: Record<string, number> = {};
  const missing: string[] = [];
  const restarted: string[] = [];
  let total = 0;
  for (const name of BROKER_SERVICES) {
    const start = before.get(name) ?? new Map<string, number>();
    const end = after.get(name) ?? new Map<string, number>();
    if (start.size === 0 || end.size === 0) missing.push(name);
    else if (start.keys().next().value !== end.keys().next().value) restarted.push(name);
    let ticks = 0;
    for (const [key, t] of end) ticks += t - (start.get(key) ?? 0);
    const seconds = Math.round((ticks / clockTicksPerSecond) * 100) / 100;
    byService[name] = seconds;
    total += seconds;
  }
  return { totalSeconds: Math.round(total * 100) / 100, byService, missing, restarted };
}

function servicePid(name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(repoRoot, '.services', name, `${name}.pid`), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
