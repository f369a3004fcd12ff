import type { HostFacts, ProcessReport } from '../../shared/protocol/agent.js';

/** Host facts as an agent's heartbeat carries them, for tests that speak the agent link. */
export const TEST_HOST_FACTS: HostFacts = {
  cpus: 2,
  cpuModel: 'test cpu',
  memoryTotalBytes: 4e9,
  memoryFreeBytes: 2e9,
  loadAverage: [0.5, 0.4, 0.3],
  diskFreeBytes: 1e10,
  diskTotalBytes: 2e10,
  uptimeSeconds: 100,
  platform: 'linux',
  nodeVersion: 'v20.0.0',
  agentPid: 123,
};

/** One crawler process of a heartbeat: running for a minute, with `fields` changed. */
export const processReport = (slot: number, fields: Partial<ProcessReport> = {}): ProcessReport => ({
  slot,
  pid: 2000 + slot,
  state: 'running',
  startedAt: Date.UTC(2026, 0, 1) - 60_000,
  restarts: 0,
  inFlight: 2,
  pagesDone: 10,
  errors: 0,
  rssBytes: 100_000_000,
  cpuSeconds: 3.5,
  ...fields,
});
