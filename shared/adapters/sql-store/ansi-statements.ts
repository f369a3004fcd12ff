import { ANSI_ALERT_STATEMENTS } from './alert-statements.js';
import {
  AGENT_COLUMNS,
  JOB_COLUMNS,
  LIVE_AGENT_STATE,
  PROCESS_COLUMNS,
  LOG_COLUMNS,
  LOG_INSERT_COLUMNS,
  FAILURE_COLUMNS,
  RESULT_COLUMNS,
  RUN_COLUMNS,
  RUN_FORGET,
  TOKEN_COLUMNS,
  VERSION_TABLE,
  columnCount,
  placeholderList,
  setColumns,
  valuesList,
  type RunListFilter,
  type Statements,
} from './statements.js';
import { ANSI_SCHEDULE_STATEMENTS } from './schedule-statements.js';
import { ANSI_SEEN_STATEMENTS } from './seen-statements.js';

/**
 * Statements of SQLite and PostgreSQL, which agree on everything the store needs: `$n`
 * placeholders (the SQLite driver rewrites them to `?`), row-value comparisons for keyset paging,
 * `LIMIT`, and `INSERT … ON CONFLICT DO UPDATE`. Only the schema lock differs.
 */
const $ = (n: number): string => `$${n}`;

const setIf = (column: string, flag: number): string =>
  `${column} = CASE WHEN ${$(flag)} = 1 THEN ${$(flag + 1)} ELSE ${column} END`;

function runList(filter: RunListFilter): string {
  const where = ['(created_at, id) < ($1, $2)'];
  let next = 4;
  if (filter.job) where.push(`job_id = ${$(next++)}`);
  if (filter.states > 0) where.push(`state IN (${placeholderList($, next, filter.states)})`);
  return `SELECT ${RUN_COLUMNS} FROM runs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $3`;
}

function runTransition(fromCount: number): string {
  return (
    `UPDATE runs SET state = $2, ${setIf('started_at', 3)}, ${setIf('ended_at', 5)}, ${setIf('error', 7)}, ` +
    `${setIf('scheduler_id', 9)}, ${setIf('heartbeat_at', 11)} ` +
    `WHERE id = $1 AND state IN (${placeholderList($, 13, fromCount)})`
  );
}

const common: Statements = {
  ping: 'SELECT 1 AS ok',
  versionTable: `CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (version INTEGER NOT NULL PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
  versionSelect: `SELECT version FROM ${VERSION_TABLE} ORDER BY version`,
  versionInsert: `INSERT INTO ${VERSION_TABLE} (version, description, applied_at) VALUES ($1, $2, $3)`,

  jobInsert: `INSERT INTO jobs (${JOB_COLUMNS}) VALUES ($1, $2, $3, $4, $5)`,
  jobGet: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`,
  jobList: `SELECT ${JOB_COLUMNS} FROM jobs WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3`,
  jobUpdate: `UPDATE jobs SET ${setIf('name', 2)}, ${setIf('settings', 4)}, updated_at = $6 WHERE id = $1`,
  jobDelete: 'DELETE FROM jobs WHERE id = $1',

  runInsert: `INSERT INTO runs (${RUN_COLUMNS}) VALUES (${placeholderList($, 1, columnCount(RUN_COLUMNS))})`,
  runGet: `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`,
  runList,
  runTransition,
  runReport:
    'UPDATE runs SET done = $2, failed = $3, queued = $4, in_flight = $5, pages_per_second = $6, scheduler_id = $7, heartbeat_at = $8, not_modified = $9, stall_since = $10, stall = $11 WHERE id = $1',
  runDelete: (states) => `DELETE FROM runs WHERE id = $1 AND state IN (${placeholderList($, 2, states)})`,
  runForget: RUN_FORGET.map((statement) => statement('$1')),
  runEndedBefore: 'SELECT id FROM runs WHERE ended_at < $1 ORDER BY ended_at, id LIMIT $2',

  logInsert: (rows) => `INSERT INTO logs (${LOG_INSERT_COLUMNS}) VALUES ${valuesList($, rows, 7)}`,
  logList: `SELECT ${LOG_COLUMNS} FROM logs WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  logListFinal: `SELECT ${LOG_COLUMNS} FROM logs WHERE run_id = $1 AND final = 1 AND id > $2 ORDER BY id LIMIT $3`,
  logGet: `SELECT ${LOG_COLUMNS} FROM logs WHERE id = $1`,
  logOfUrl: `SELECT ${LOG_COLUMNS} FROM logs WHERE run_id = $1 AND url = $2 ORDER BY id DESC LIMIT $3`,
  logMarkRetried: 'UPDATE logs SET retried_at = $1 WHERE id = $2 AND final = 1 AND retried_at IS NULL',
  logRetriesToQueue: `SELECT ${LOG_COLUMNS} FROM logs WHERE run_id = $1 AND requeued_at IS NULL AND retried_at IS NOT NULL ORDER BY id LIMIT $2`,
  logMarkRequeued: 'UPDATE logs SET requeued_at = $1 WHERE id = $2 AND requeued_at IS NULL',

  resultUpsert: {
    kind: 'single',
    sql:
      `INSERT INTO results (${RESULT_COLUMNS}) VALUES (${placeholderList($, 1, columnCount(RESULT_COLUMNS))}) ` +
      `ON CONFLICT (capture_id) DO UPDATE SET ${setColumns(RESULT_COLUMNS, (c) => `excluded.${c}`)}`,
  },
  resultList: `SELECT ${RESULT_COLUMNS} FROM results WHERE run_id = $1 AND (at, capture_id) > ($2, $3) ORDER BY at, capture_id LIMIT $4`,

  failureUpsert: {
    kind: 'single',
    sql:
      `INSERT INTO extract_failures (${FAILURE_COLUMNS}) VALUES (${placeholderList($, 1, columnCount(FAILURE_COLUMNS))}) ` +
      `ON CONFLICT (source) DO UPDATE SET ${setColumns(FAILURE_COLUMNS, (c) => `excluded.${c}`)}`,
  },
  failureList: `SELECT ${FAILURE_COLUMNS} FROM extract_failures WHERE (at, source) > ($1, $2) ORDER BY at, source LIMIT $3`,

  tokenInsert: `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  tokenFindByHash: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = $1 AND revoked_at IS NULL`,
  tokenList: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3`,
  tokenRevoke: 'UPDATE tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL',
  tokenTouch: 'UPDATE tokens SET last_used_at = $2 WHERE id = $1',

  alerts: ANSI_ALERT_STATEMENTS,
  agentInsert: `INSERT INTO agents (${AGENT_COLUMNS}) VALUES (${placeholderList($, 1, 11)})`,
  agentRegister: `UPDATE agents SET name = $2, hostname = $3, url = $4, facts = $5, last_heartbeat_at = $6, state = ${LIVE_AGENT_STATE} WHERE id = $1`,
  agentHeartbeat: `UPDATE agents SET facts = $2, last_heartbeat_at = $3, state = ${LIVE_AGENT_STATE} WHERE id = $1`,
  agentGet: `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1`,
  agentList: `SELECT ${AGENT_COLUMNS} FROM agents WHERE (registered_at, id) > ($1, $2) ORDER BY registered_at, id LIMIT $3`,
  agentSetDesired: `UPDATE agents SET ${setIf('desired_processes', 2)}, ${setIf('drain', 4)}, ${setIf('orders', 6)} WHERE id = $1`,
  agentSyncState: `UPDATE agents SET state = ${LIVE_AGENT_STATE} WHERE id = $1 AND state IN ('online', 'draining')`,
  agentStale: "SELECT id FROM agents WHERE state IN ('online', 'draining') AND last_heartbeat_at < $1",
  agentMarkLost:
    "UPDATE agents SET state = 'lost' WHERE id = $1 AND state IN ('online', 'draining') AND last_heartbeat_at < $2",
  agentMarkStopped: "UPDATE agents SET state = 'stopped' WHERE id = $1",
  agentForget: "DELETE FROM agents WHERE id = $1 AND state IN ('lost', 'stopped')",
  processDelete: 'DELETE FROM agent_processes WHERE agent_id = $1',
  processInsert: (rows) =>
    `INSERT INTO agent_processes (${PROCESS_COLUMNS}) VALUES ${valuesList($, rows, 12)}`,
  processList: `SELECT ${PROCESS_COLUMNS} FROM agent_processes WHERE agent_id = $1 ORDER BY slot`,
  processListState: `SELECT ${PROCESS_COLUMNS} FROM agent_processes WHERE state = $1 ORDER BY agent_id, slot`,
  processSetState: 'UPDATE agent_processes SET state = $2 WHERE agent_id = $1',
  schedules: ANSI_SCHEDULE_STATEMENTS,
  seen: ANSI_SEEN_STATEMENTS,
};

export const SQLITE_STATEMENTS: Statements = common;
export const POSTGRES_STATEMENTS: Statements = common;

/** Key of the advisory lock the PostgreSQL store migrates under ('ackc' in ASCII). */
export const PG_SCHEMA_LOCK_KEY = 0x61636b63;

/**
 * PostgreSQL's schema lock: transaction-scoped, so the migration's COMMIT or ROLLBACK releases it
 * (SQLite's is the migration transaction's `BEGIN IMMEDIATE`).
 */
export const PG_SCHEMA_LOCK = `SELECT pg_advisory_xact_lock(${PG_SCHEMA_LOCK_KEY})`;
