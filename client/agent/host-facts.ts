import { statfsSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem, uptime } from 'node:os';
import type { HostFacts } from '../../shared/protocol/agent.js';

/** What the heartbeat says of the host: CPUs, memory, load, and disk free where the data lives. */
export function hostFacts(dataDir: string): HostFacts {
  const cpuList = cpus();
  let disk: { free: number; total: number } | null = null;
  try {
    const s = statfsSync(dataDir);
    disk = { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
  } catch {
    disk = null;
  }
  const [one = 0, five = 0, fifteen = 0] = loadavg();
  return {
    cpus: cpuList.length,
    cpuModel: (cpuList[0]?.model ?? 'unknown').slice(0, 200),
    memoryTotalBytes: totalmem(),
    memoryFreeBytes: freemem(),
    loadAverage: [one, five, fifteen],
    diskFreeBytes: disk?.free ?? null,
    diskTotalBytes: disk?.total ?? null,
    uptimeSeconds: uptime(),
    platform: process.platform,
    nodeVersion: process.version,
    agentPid: process.pid,
  };
}
