import type { AlertStatements } from './alert-statements.js';
import type { ScheduleStatements } from './schedule-statements.js';
import type { SeenStatements } from './seen-statements.js';

/**
 * The statements the store sends, as data: one set per dialect (ansi-statements.ts for SQLite and
 * PostgreSQL, mssql-statements.ts for SQL Server). The repositories (repositories.ts) bind them
 * with positional parameters in the order each comment gives, the same on every dialect.
 */
export interface RunListFilter {
  /** Filter by job: binds the job id after the limit. */
  job: boolean;
  /** How many states to filter by (0: any); they bind after the job id. */
  states: number;
}

/**
 * How a result is written idempotently: one statement (`INSERT … ON CONFLICT DO UPDATE`), or, on
 * SQL Server, an `UPDATE` holding a key-range lock and an `INSERT` when it touched no row, in the
 * batch's transaction.
 */
export type UpsertStrategy =
  { kind: 'single'; sql: string } | { kind: 'update-then-insert'; update: string; insert: string };

export interface Statements {
  ping: string;
  /** Creates the version table when it is missing. */
  versionTable: string;
  versionSelect: string;
  /** version, description, applied_at */
  versionInsert: string;

  /** id, name, settings, created_at, updated_at */
  jobInsert: string;
  /** id */
  jobGet: string;
  /** cursor created_at, cursor id, limit: oldest first */
  jobList: string;
  /** id, set name (0/1), name, set settings (0/1), settings, updated_at */
  jobUpdate: string;
  /** id */
  jobDelete: string;

  /** every run column, in RUN_COLUMNS order */
  runInsert: string;
  /** id */
  runGet: string;
  /** cursor created_at, cursor id, limit, [job id], [states…]: newest first */
  runList(filter: RunListFilter): string;
  /**
   * id, to, then for started_at, ended_at, error, scheduler_id, heartbeat_at each a (0/1, value)
   * pair, then the `from` states.
   */
  runTransition(fromCount: number): string;
  /** id, done, failed, queued, in_flight, pages_per_second, scheduler_id, heartbeat_at, not_modified, stall_since, stall */
  runReport: string;
  /** id, then the states the run may be in (1..MAX_STATES): deletes the run's row */
  runDelete(states: number): string;
  /**
   * id: what the other tables hold of a deleted run goes (its failures, results, extract failures,
   * the frontier's rows); a schedule's fire keeps its row, without the run.
   */
  runForget: readonly string[];
  /** at, limit: ids of the runs that ended before `at`, soonest end first */
  runEndedBefore: string;

  /** `rows` rows of run_id, url, code, attempts, last_error, final, at (1..LOG_INSERT_CHUNK) */
  logInsert(rows: number): string;
  /** run_id, cursor id, limit */
  logList: string;
  logListFinal: string;
  /** id */
  logGet: string;
  /** run_id, url, limit: one URL's rows in a run, newest first */
  logOfUrl: string;
  /** retried_at, id: sets it on a final failure not retried yet */
  logMarkRetried: string;
  /** run_id, limit: retries not yet queued, oldest first */
  logRetriesToQueue: string;
  /** requeued_at, id */
  logMarkRequeued: string;

  /** the RESULT_COLUMNS, in order */
  resultUpsert: UpsertStrategy;
  /** run_id, cursor at, cursor capture_id, limit */
  resultList: string;

  /** the FAILURE_COLUMNS, in order */
  failureUpsert: UpsertStrategy;
  /** cursor at, cursor source, limit: oldest first */
  failureList: string;

  /** id, name, scopes, hash, created_at, revoked_at, last_used_at */
  tokenInsert: string;
  /** hash */
  tokenFindByHash: string;
  /** cursor created_at, cursor id, limit */
  tokenList: string;
  /** id, at */
  tokenRevoke: string;
  /** id, at */
  tokenTouch: string;

  /** The alerting tables' (alert-statements.ts). */
  alerts: AlertStatements;
  /** every agent column, in AGENT_COLUMNS order */
  agentInsert: string;
  /** id, name, hostname, url, facts, last_heartbeat_at: `online`, or `draining` while drain is set */
  agentRegister: string;
  /** id, facts, last_heartbeat_at: as agentRegister */
  agentHeartbeat: string;
  /** id */
  agentGet: string;
  /** cursor registered_at, cursor id, limit: oldest first */
  agentList: string;
  /** id, set desired_processes (0/1), desired_processes, set drain (0/1), drain, set orders (0/1), orders */
  agentSetDesired: string;
  /** id: `online` or `draining` as drain says, for an agent that is one of the two */
  agentSyncState: string;
  /** before: ids of agents online or draining whose last heartbeat is older */
  agentStale: string;
  /** id, before: lost, if it still is stale */
  agentMarkLost: string;
  /** id */
  agentMarkStopped: string;
  /** id: only while it is lost or stopped */
  agentForget: string;
  /** agent_id */
  processDelete: string;
  /** `rows` rows of every process column, in PROCESS_COLUMNS order (1..PROCESS_INSERT_CHUNK) */
  processInsert(rows: number): string;
  /** agent_id: by slot */
  processList: string;
  /** state: by agent, then slot */
  processListState: string;
  /** agent_id, state: every process of the agent */
  processSetState: string;
  /** The schedule tables' (schedule-statements.ts). */
  schedules: ScheduleStatements;
  /** The frontier's shared seen-set (seen-statements.ts). */
  seen: SeenStatements;
}

export const JOB_COLUMNS = 'id, name, settings, created_at, updated_at';
export const RUN_COLUMNS =
  'id, job_id, state, settings, done, failed, queued, in_flight, pages_per_second, created_at, started_at, ended_at, scheduler_id, heartbeat_at, error, not_modified, schedule_id, fire_at, stall_since, stall';
export const LOG_COLUMNS = 'id, run_id, url, code, attempts, last_error, final, at, retried_at, requeued_at';
export const RESULT_COLUMNS =
  'capture_id, run_id, job_id, url, status, data, at, title, author, published_at, language, description, canonical_url, main_text, fetched_at';
export const FAILURE_COLUMNS = 'source, capture_id, run_id, url, code, reason, at';

/** `a = <value of a>, b = …` for every column of `columns` but the first (the key). */
export function setColumns(columns: string, value: (column: string, n: number) => string): string {
  return columns
    .split(', ')
    .map((column, i) => ({ column, n: i + 1 }))
    .slice(1)
    .map(({ column, n }) => `${column} = ${value(column, n)}`)
    .join(', ');
}

/** How many columns a column list names. */
export function columnCount(columns: string): number {
  return columns.split(', ').length;
}
export const TOKEN_COLUMNS = 'id, name, scopes, hash, created_at, revoked_at, last_used_at';

export const AGENT_COLUMNS =
  'id, name, hostname, url, state, facts, last_heartbeat_at, registered_at, desired_processes, drain, orders';
export const PROCESS_COLUMNS =
  'agent_id, slot, pid, state, started_at, restarts, in_flight, pages_done, errors, rss_bytes, cpu_seconds, reported_at';

/** Process rows per INSERT (12 columns: 1,200 parameters, under SQL Server's 2,100). */
export const PROCESS_INSERT_CHUNK = 100;

/** An agent's state from its drain flag, for statements that see it alive. */
export const LIVE_AGENT_STATE = "CASE WHEN drain = 1 THEN 'draining' ELSE 'online' END";

export const VERSION_TABLE = 'ackcrawl_schema_version';

/**
 * Log rows per INSERT: one statement per hundred rows rather than a round trip per row (SQL
 * Server takes at most 2100 parameters in a request; 100 rows × 7 is 700).
 */
export const LOG_INSERT_CHUNK = 100;

export const LOG_INSERT_COLUMNS = 'run_id, url, code, attempts, last_error, final, at';

/** `VALUES (…), (…)` for `rows` rows of `width` numbered placeholders. */
export function valuesList(placeholder: (n: number) => string, rows: number, width: number): string {
  return Array.from(
    { length: rows },
    (_, r) => `(${placeholderList(placeholder, r * width + 1, width)})`,
  ).join(', ');
}

/** The most `from` states a transition names, and states a run list filters by. */
export const MAX_STATES = 6;

/** `placeholder(1) … placeholder(count)` shifted by `first - 1`, comma-separated. */
export function placeholderList(placeholder: (n: number) => string, first: number, count: number): string {
  return Array.from({ length: count }, (_, i) => placeholder(first + i)).join(', ');
}

/** What SQL holds of a run besides its row, each statement given the placeholder of the run's id. */
export const RUN_FORGET: readonly ((id: string) => string)[] = [
  (id) => `DELETE FROM logs WHERE run_id = ${id}`,
  (id) => `DELETE FROM results WHERE run_id = ${id}`,
  (id) => `DELETE FROM extract_failures WHERE run_id = ${id}`,
  (id) => `DELETE FROM frontier_seen WHERE run_id = ${id}`,
  (id) => `DELETE FROM frontier_counts WHERE run_id = ${id}`,
  (id) => `UPDATE schedule_fires SET run_id = NULL WHERE run_id = ${id}`,
];
