import { formatTable } from '../jobs/table.js';

/** What the CLI reads of an agent answer (GET /api/v1/agents/{id}; docs/fleet.md). */
export interface AgentAnswer {
  id: string;
  name: string;
  hostname: string;
  url: string;
  state: string;
  facts: {
    cpus?: number;
    memoryTotalBytes?: number;
    memoryFreeBytes?: number;
    loadAverage?: number[];
    diskFreeBytes?: number;
    diskTotalBytes?: number;
    [key: string]: unknown;
  };
  lastHeartbeatAt: string;
  registeredAt: string;
  desiredProcesses: number;
  drain: boolean;
  stoppedSlots: number[];
  processes: ProcessAnswer[];
}

export interface ProcessAnswer {
  slot: number;
  pid: number | null;
  state: string;
  startedAt: string | null;
  uptimeSeconds: number | null;
  restarts: number;
  inFlight: number;
  pagesDone: number;
  errors: number;
  rssBytes: number;
  cpuSeconds: number;
}

const GB = 1e9;

/** "12 s ago", "3 min ago", "2 h ago" from `now`. */
export function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

export function duration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

const running = (a: AgentAnswer): number => a.processes.filter((p) => p.state === 'running').length;

/** "2/4" processes running of those wanted, "drain" when draining. */
const processCount = (a: AgentAnswer): string =>
  `${running(a)}/${a.drain ? 0 : a.desiredProcesses}${a.drain ? ' (drain)' : ''}`;

function cpu(a: AgentAnswer): string {
  const load = a.facts.loadAverage?.[0];
  if (load === undefined) return '-';
  return `${load.toFixed(2)}${a.facts.cpus ? `/${a.facts.cpus}` : ''}`;
}

function used(free: number | undefined, total: number | undefined): string {
  if (free === undefined || total === undefined || total <= 0) return '-';
  return `${((total - free) / GB).toFixed(1)}/${(total / GB).toFixed(1)} GB`;
}

export function agentsTable(agents: readonly AgentAnswer[], now: number): string {
  if (agents.length === 0) return 'no agents';
  return formatTable(
    ['AGENT', 'STATE', 'HOST', 'PROCESSES', 'LAST SEEN', 'LOAD/CPUS', 'MEMORY', 'DISK'],
    agents.map((a) => [
      a.id,
      a.state,
      a.hostname,
      processCount(a),
      ago(a.lastHeartbeatAt, now),
      cpu(a),
      used(a.facts.memoryFreeBytes, a.facts.memoryTotalBytes),
      used(a.facts.diskFreeBytes, a.facts.diskTotalBytes),
    ]),
  );
}

export function processesTable(processes: readonly ProcessAnswer[]): string {
  if (processes.length === 0) return 'no crawler processes';
  return formatTable(
    ['SLOT', 'PID', 'STATE', 'RESTARTS', 'IN FLIGHT', 'PAGES', 'ERRORS', 'RSS MB', 'CPU S', 'UPTIME'],
    processes.map((p) => [
      String(p.slot),
      p.pid === null ? '-' : String(p.pid),
      p.state,
      String(p.restarts),
      String(p.inFlight),
      String(p.pagesDone),
      String(p.errors),
      (p.rssBytes / 1024 / 1024).toFixed(0),
      p.cpuSeconds.toFixed(1),
      duration(p.uptimeSeconds),
    ]),
  );
}

export function agentDetails(a: AgentAnswer, now: number): string {
  const wanted = a.drain
    ? 'drain (every process stops; set a count to start again)'
    : `${a.desiredProcesses}${a.stoppedSlots.length > 0 ? `, slots ${a.stoppedSlots.join(', ')} stopped` : ''}`;
  return [
    `agent ${a.id} (${a.name})`,
    `state: ${a.state}`,
    `host: ${a.hostname}, ${a.url}`,
    `last seen: ${ago(a.lastHeartbeatAt, now)}, registered ${a.registeredAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`,
    `processes: ${running(a)} running, wanted ${wanted}`,
    `load/cpus: ${cpu(a)}, memory ${used(a.facts.memoryFreeBytes, a.facts.memoryTotalBytes)}, disk ${used(a.facts.diskFreeBytes, a.facts.diskTotalBytes)}`,
    '',
    processesTable(a.processes),
  ].join('\n');
}
