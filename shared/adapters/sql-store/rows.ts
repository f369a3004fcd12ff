import type {
  ExtractFailureRow,
  AgentRow,
  AgentState,
  JobRow,
  ProcessRow,
  ProcessState,
  SlotOrders,
  LogEntry,
  ResultRow,
  RunRow,
  RunState,
  TokenRow,
  TokenScope,
} from '../../ports/sql-store.js';
import type { SqlRow } from './driver.js';

/**
 * Database rows to the port's rows. PostgreSQL and SQL Server hand BIGINT back as strings and
 * SQLite booleans as 0/1, so every column is read through these.
 */
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1';
const parsed = (v: unknown): unknown => JSON.parse(String(v));

export function toJob(r: SqlRow): JobRow {
  return {
    id: str(r.id),
    name: str(r.name),
    settings: parsed(r.settings),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toRun(r: SqlRow): RunRow {
  return {
    id: str(r.id),
    jobId: str(r.job_id),
    state: str(r.state) as RunState,
    settings: parsed(r.settings),
    counters: {
      done: num(r.done),
      failed: num(r.failed),
      queued: num(r.queued),
      inFlight: num(r.in_flight),
      pagesPerSecond: num(r.pages_per_second),
      notModified: num(r.not_modified),
    },
    createdAt: num(r.created_at),
    startedAt: numOrNull(r.started_at),
    endedAt: numOrNull(r.ended_at),
    schedulerId: strOrNull(r.scheduler_id),
    heartbeatAt: numOrNull(r.heartbeat_at),
    error: strOrNull(r.error),
    scheduledBy:
      r.schedule_id === null || r.schedule_id === undefined || r.fire_at === null || r.fire_at === undefined
        ? null
        : { scheduleId: str(r.schedule_id), fireAt: num(r.fire_at) },
    ...(r.stall_since === null || r.stall_since === undefined || r.stall === null || r.stall === undefined
      ? {}
      : { stall: { since: num(r.stall_since), reason: str(r.stall) } }),
  };
}

export function toLog(r: SqlRow): LogEntry {
  return {
    id: str(r.id),
    runId: str(r.run_id),
    url: str(r.url),
    code: str(r.code),
    attempts: num(r.attempts),
    lastError: str(r.last_error),
    final: bool(r.final),
    at: num(r.at),
    retriedAt: r.retried_at === null || r.retried_at === undefined ? null : num(r.retried_at),
    requeuedAt: r.requeued_at === null || r.requeued_at === undefined ? null : num(r.requeued_at),
  };
}

export function toResult(r: SqlRow): ResultRow {
  return {
    captureId: str(r.capture_id),
    runId: str(r.run_id),
    jobId: str(r.job_id),
    url: str(r.url),
    status: numOrNull(r.status),
    data: parsed(r.data),
    at: num(r.at),
    title: strOrNull(r.title),
    author: strOrNull(r.author),
    publishedAt: numOrNull(r.published_at),
    language: strOrNull(r.language),
    description: strOrNull(r.description),
    canonicalUrl: strOrNull(r.canonical_url),
    mainText: strOrNull(r.main_text),
    fetchedAt: numOrNull(r.fetched_at),
  };
}

export function toExtractFailure(r: SqlRow): ExtractFailureRow {
  return {
    source: str(r.source),
    captureId: strOrNull(r.capture_id),
    runId: strOrNull(r.run_id),
    url: strOrNull(r.url),
    code: str(r.code),
    reason: str(r.reason),
    at: num(r.at),
  };
}

export function toToken(r: SqlRow): TokenRow {
  return {
    id: str(r.id),
    name: str(r.name),
    scopes: JSON.parse(str(r.scopes)) as TokenScope[],
    hash: str(r.hash),
    createdAt: num(r.created_at),
    revokedAt: numOrNull(r.revoked_at),
    lastUsedAt: numOrNull(r.last_used_at),
  };
}

export function toAgent(r: SqlRow): AgentRow {
  return {
    id: str(r.id),
    name: str(r.name),
    hostname: str(r.hostname),
    url: str(r.url),
    state: str(r.state) as AgentState,
    facts: parsed(r.facts),
    lastHeartbeatAt: num(r.last_heartbeat_at),
    registeredAt: num(r.registered_at),
    desiredProcesses: num(r.desired_processes),
    drain: bool(r.drain),
    orders: parsed(r.orders) as SlotOrders,
  };
}

export function toProcess(r: SqlRow): ProcessRow {
  return {
    agentId: str(r.agent_id),
    slot: num(r.slot),
    pid: numOrNull(r.pid),
    state: str(r.state) as ProcessState,
    startedAt: numOrNull(r.started_at),
    restarts: num(r.restarts),
    inFlight: num(r.in_flight),
    pagesDone: num(r.pages_done),
    errors: num(r.errors),
    rssBytes: num(r.rss_bytes),
    cpuSeconds: num(r.cpu_seconds),
    reportedAt: num(r.reported_at),
  };
}
