import { clockTicksPerSecond, pageSizeBytes, readProcStat } from '../../shared/os/proc-stat.js';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import type { ProcessManager } from '../../shared/processes/process-manager.js';

/** Every slot as the heartbeat reports it: the manager's view plus RSS and CPU from /proc/<pid>/stat. */
export function processReports(manager: ProcessManager): ProcessReport[] {
  return manager.report().map(({ render: _render, ...slot }) => {
    const stat = slot.pid === null ? undefined : readProcStat(slot.pid);
    return {
      ...slot,
      rssBytes: stat ? stat.rssPages * pageSizeBytes : 0,
      cpuSeconds: stat ? stat.cpuTicks / clockTicksPerSecond : 0,
    };
  });
}
