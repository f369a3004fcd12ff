/** The API's answers as the dashboard reads them (docs/master-api.md; GET /api/v1/openapi.json). */
export type RunState = 'queued' | 'running' | 'paused' | 'succeeded' | 'failed' | 'cancelled';

export interface Counters {
  done: number;
  failed: number;
  notModified: number;
  queued: number;
  inFlight: number;
  pagesPerSecond: number;
}

export interface LiveRun {
  id: string;
  jobId: string;
  state: RunState;
  waiting: string | null;
  counters: Counters;
  schedulerId: string | null;
  heartbeatAt: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** When the run's time limit ends it; null without one (see the API's run schema). */
  endsBy: string | null;
  error: string | null;
  scheduledBy: { scheduleId: string; fireAt: string } | null;
}

export interface Run extends LiveRun {
  settings: Record<string, unknown>;
}

export interface Job {
  id: string;
  name: string;
  settings: Record<string, unknown> & { seeds?: string[] };
  createdAt: string;
  updatedAt: string;
}

export type ProcessState = 'starting' | 'running' | 'stopping' | 'stopped' | 'crash-loop' | 'lost';

export interface CrawlerProcess {
  slot: number;
  pid: number | null;
  state: ProcessState;
  startedAt: string | null;
  uptimeSeconds: number | null;
  restarts: number;
  inFlight: number;
  pagesDone: number;
  errors: number;
  rssBytes: number;
  cpuSeconds: number;
  reportedAt: string;
}

export interface Agent {
  id: string;
  name: string;
  hostname: string;
  url: string;
  state: 'online' | 'draining' | 'lost' | 'stopped';
  facts: {
    cpus?: number;
    cpuModel?: string;
    memoryTotalBytes?: number;
    memoryFreeBytes?: number;
    loadAverage?: number[];
    diskFreeBytes?: number | null;
    diskTotalBytes?: number | null;
    uptimeSeconds?: number;
    platform?: string;
    nodeVersion?: string;
  };
  lastHeartbeatAt: string;
  registeredAt: string;
  desiredProcesses: number;
  drain: boolean;
  stoppedSlots: number[];
  processes: CrawlerProcess[];
}

export interface Alert {
  id: string;
  ruleId: string;
  subject: string;
  type: string;
  state: 'active' | 'resolved' | 'event';
  data: Record<string, unknown>;
  openedAt: string;
  resolvedAt: string | null;
}

export interface AlertRule {
  id: string;
  name: string;
  kind: string;
  params: Record<string, unknown>;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  status: { evaluatedAt: string; available: boolean; reason: string | null } | null;
}

export interface Webhook {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

export interface Delivery {
  id: string;
  webhookId: string;
  alertId: string | null;
  eventType: string;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface Failure {
  id: string;
  url: string;
  code: string;
  attempts: number;
  lastError: string;
  final: boolean;
  at: string;
  retriedAt?: string | null;
}

export interface HostState {
  host: string;
  inFlight?: number;
  concurrency?: number;
  delayMs?: number;
  crawlDelayMs?: number | null;
  nextStartAt?: string | number | null;
  pausedUntil?: string | number | null;
  pauseReason?: string | null;
  queued?: number;
  /** Outcomes of this run's tasks of the host lately. */
  fetched?: number;
  lastActiveAt?: string | null;
}

export type FireOutcome = 'claimed' | 'started' | 'waiting' | 'skipped' | 'missed';

export interface Fire {
  fireAt: string;
  claimedAt: string;
  claimedBy: string;
  outcome: FireOutcome;
  runId: string | null;
  missed: number;
}

export interface Schedule {
  id: string;
  jobId: string;
  expression: string;
  timeZone: string;
  overlap: 'skip' | 'queue' | 'allow';
  misfire: 'run-once' | 'skip';
  enabled: boolean;
  waitingFireAt: string | null;
  nextFireTimes: string[];
  lastFire: Fire | null;
}

export interface WhyAnswer {
  url: string;
  normalized: string;
  state: string;
  reason: string;
  duplicateOf: string | null;
  task: Record<string, unknown> | null;
  host: Record<string, unknown> | null;
  crawler: Record<string, unknown> | null;
  robots: Record<string, unknown> | null;
}

export interface Page<T> {
  items: T[];
  next: string | null;
}

export interface LivePoint {
  t: number;
  pagesPerSecond: number;
  runs: Record<string, number>;
  errors: Record<string, number>;
}

export interface LiveSnapshot {
  at: string;
  runs: LiveRun[];
  agents: Agent[];
  alerts: Alert[];
  point: LivePoint;
}

/** What `ackcrawl extract` made of one capture of a run's page (GET /runs/{id}/results). */
export interface Result {
  captureId: string;
  url: string;
  status: number | null;
  title: string | null;
  author: string | null;
  publishedAt: string | null;
  language: string | null;
  description: string | null;
  canonicalUrl: string | null;
  fetchedAt: string | null;
  at: string;
  data: unknown;
}
