import { MSSQL_ALERT_STATEMENTS } from './alert-statements.js';
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
import { MSSQL_SCHEDULE_STATEMENTS } from './schedule-statements.js';
import { MSSQL_SEEN_STATEMENTS } from './seen-statements.js';

/**
 * Every T-SQL statement the SQL Server store sends, written from the mssql driver's and SQL
 * Server's documentation. test/unit/sql-store-mssql-statements.test.ts parses each one (and every
 * generated variant) with node-sql-parser's `transactsql` dialect.
 *
 * - Parameters are `@v1…`: the driver keeps `@p1…` for itself ("Do not use parameters @p{n}").
 * - Paging is by key (`WHERE (created_at, id) > cursor`), so `TOP (@n)` with `ORDER BY` is all a
 *   page needs; `OFFSET 0 ROWS FETCH NEXT @n ROWS ONLY` says the same but node-sql-parser cannot
 *   parse a parameter in FETCH NEXT, and an OFFSET the keyset never uses would only hide that.
 * - SQL Server has no row-value comparison: the keyset is spelled out with OR.
 * - A result is upserted by `UPDATE … WITH (UPDLOCK, SERIALIZABLE)` and, when it touched no row,
 *   `INSERT`, in the batch's transaction: the key-range lock the UPDATE holds until COMMIT keeps
 *   a concurrent writer of the same capture id from inserting in between (no MERGE, whose
 *   concurrency bugs need the same hints anyway; and node-sql-parser parses neither MERGE nor
 *   `IF @@ROWCOUNT = 0 INSERT …`).
 */
export const v = (n: number): string => `@v${n}`;

const setIf = (column: string, flag: number): string =>
  `${column} = CASE WHEN ${v(flag)} = 1 THEN ${v(flag + 1)} ELSE ${column} END`;

const after = (first: string, second: string, op: '<' | '>', at: number): string =>
  `(${first} ${op} ${v(at)} OR (${first} = ${v(at)} AND ${second} ${op} ${v(at + 1)}))`;

function runList(filter: RunListFilter): string {
  const where = [after('created_at', 'id', '<', 1)];
  let next = 4;
  if (filter.job) where.push(`job_id = ${v(next++)}`);
  if (filter.states > 0) where.push(`state IN (${placeholderList(v, next, filter.states)})`);
  return `SELECT TOP (@v3) ${RUN_COLUMNS} FROM runs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC`;
}

function runTransition(fromCount: number): string {
  return (
    `UPDATE runs SET state = @v2, ${setIf('started_at', 3)}, ${setIf('ended_at', 5)}, ${setIf('error', 7)}, ` +
    `${setIf('scheduler_id', 9)}, ${setIf('heartbeat_at', 11)} ` +
    `WHERE id = @v1 AND state IN (${placeholderList(v, 13, fromCount)})`
  );
}

export const MSSQL_STATEMENTS: Statements = {
  ping: 'SELECT 1 AS ok',
  versionTable:
    `IF OBJECT_ID(N'${VERSION_TABLE}', N'U') IS NULL ` +
    `CREATE TABLE ${VERSION_TABLE} (version INT NOT NULL, description NVARCHAR(200) NOT NULL, applied_at BIGINT NOT NULL, ` +
    `CONSTRAINT ${VERSION_TABLE}_pkey PRIMARY KEY (version))`,
  versionSelect: `SELECT version FROM ${VERSION_TABLE} ORDER BY version`,
  versionInsert: `INSERT INTO ${VERSION_TABLE} (version, description, applied_at) VALUES (@v1, @v2, @v3)`,

  jobInsert: `INSERT INTO jobs (${JOB_COLUMNS}) VALUES (@v1, @v2, @v3, @v4, @v5)`,
  jobGet: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = @v1`,
  jobList: `SELECT TOP (@v3) ${JOB_COLUMNS} FROM jobs WHERE ${after('created_at', 'id', '>', 1)} ORDER BY created_at, id`,
  jobUpdate: `UPDATE jobs SET ${setIf('name', 2)}, ${setIf('settings', 4)}, updated_at = @v6 WHERE id = @v1`,
  jobDelete: 'DELETE FROM jobs WHERE id = @v1',

  runInsert: `INSERT INTO runs (${RUN_COLUMNS}) VALUES (${placeholderList(v, 1, columnCount(RUN_COLUMNS))})`,
  runGet: `SELECT ${RUN_COLUMNS} FROM runs WHERE id = @v1`,
  runList,
  runTransition,
  runReport:
    'UPDATE runs SET done = @v2, failed = @v3, queued = @v4, in_flight = @v5, pages_per_second = @v6, scheduler_id = @v7, heartbeat_at = @v8, not_modified = @v9, stall_since = @v10, stall = @v11 WHERE id = @v1',
  runDelete: (states) => `DELETE FROM runs WHERE id = @v1 AND state IN (${placeholderList(v, 2, states)})`,
  runForget: RUN_FORGET.map((statement) => statement('@v1')),
  runEndedBefore: 'SELECT TOP (@v2) id FROM runs WHERE ended_at < @v1 ORDER BY ended_at, id',

  logInsert: (rows) => `INSERT INTO logs (${LOG_INSERT_COLUMNS}) VALUES ${valuesList(v, rows, 7)}`,
  logList: `SELECT TOP (@v3) ${LOG_COLUMNS} FROM logs WHERE run_id = @v1 AND id > @v2 ORDER BY id`,
  logListFinal: `SELECT TOP (@v3) ${LOG_COLUMNS} FROM logs WHERE run_id = @v1 AND final = 1 AND id > @v2 ORDER BY id`,
  logGet: `SELECT ${LOG_COLUMNS} FROM logs WHERE id = @v1`,
  logOfUrl: `SELECT TOP (@v3) ${LOG_COLUMNS} FROM logs WHERE run_id = @v1 AND url = @v2 ORDER BY id DESC`,
  logMarkRetried: 'UPDATE logs SET retried_at = @v1 WHERE id = @v2 AND final = 1 AND retried_at IS NULL',
  logRetriesToQueue: `SELECT TOP (@v2) ${LOG_COLUMNS} FROM logs WHERE run_id = @v1 AND requeued_at IS NULL AND retried_at IS NOT NULL ORDER BY id`,
  logMarkRequeued: 'UPDATE logs SET requeued_at = @v1 WHERE id = @v2 AND requeued_at IS NULL',

  resultUpsert: {
    kind: 'update-then-insert',
    update: `UPDATE results WITH (UPDLOCK, SERIALIZABLE) SET ${setColumns(RESULT_COLUMNS, (_, n) => v(n))} WHERE capture_id = @v1`,
    insert: `INSERT INTO results (${RESULT_COLUMNS}) VALUES (${placeholderList(v, 1, columnCount(RESULT_COLUMNS))})`,
  },
  resultList: `SELECT TOP (@v4) ${RESULT_COLUMNS} FROM results WHERE run_id = @v1 AND ${after('at', 'capture_id', '>', 2)} ORDER BY at, capture_id`,

  failureUpsert: {
    kind: 'update-then-insert',
    update: `UPDATE extract_failures WITH (UPDLOCK, SERIALIZABLE) SET ${setColumns(FAILURE_COLUMNS, (_, n) => v(n))} WHERE source = @v1`,
    insert: `INSERT INTO extract_failures (${FAILURE_COLUMNS}) VALUES (${placeholderList(v, 1, columnCount(FAILURE_COLUMNS))})`,
  },
  failureList: `SELECT TOP (@v3) ${FAILURE_COLUMNS} FROM extract_failures WHERE ${after('at', 'source', '>', 1)} ORDER BY at, source`,

  tokenInsert: `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (@v1, @v2, @v3, @v4, @v5, @v6, @v7)`,
  tokenFindByHash: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = @v1 AND revoked_at IS NULL`,
  tokenList: `SELECT TOP (@v3) ${TOKEN_COLUMNS} FROM tokens WHERE ${after('created_at', 'id', '>', 1)} ORDER BY created_at, id`,
  tokenRevoke: 'UPDATE tokens SET revoked_at = @v2 WHERE id = @v1 AND revoked_at IS NULL',
  tokenTouch: 'UPDATE tokens SET last_used_at = @v2 WHERE id = @v1',

  alerts: MSSQL_ALERT_STATEMENTS,
  agentInsert: `INSERT INTO agents (${AGENT_COLUMNS}) VALUES (${placeholderList(v, 1, 11)})`,
  agentRegister: `UPDATE agents SET name = @v2, hostname = @v3, url = @v4, facts = @v5, last_heartbeat_at = @v6, state = ${LIVE_AGENT_STATE} WHERE id = @v1`,
  agentHeartbeat: `UPDATE agents SET facts = @v2, last_heartbeat_at = @v3, state = ${LIVE_AGENT_STATE} WHERE id = @v1`,
  agentGet: `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = @v1`,
  agentList: `SELECT TOP (@v3) ${AGENT_COLUMNS} FROM agents WHERE ${after('registered_at', 'id', '>', 1)} ORDER BY registered_at, id`,
  agentSetDesired: `UPDATE agents SET ${setIf('desired_processes', 2)}, ${setIf('drain', 4)}, ${setIf('orders', 6)} WHERE id = @v1`,
  agentSyncState: `UPDATE agents SET state = ${LIVE_AGENT_STATE} WHERE id = @v1 AND state IN ('online', 'draining')`,
  agentStale: "SELECT id FROM agents WHERE state IN ('online', 'draining') AND last_heartbeat_at < @v1",
  agentMarkLost:
    "UPDATE agents SET state = 'lost' WHERE id = @v1 AND state IN ('online', 'draining') AND last_heartbeat_at < @v2",
  agentMarkStopped: "UPDATE agents SET state = 'stopped' WHERE id = @v1",
  agentForget: "DELETE FROM agents WHERE id = @v1 AND state IN ('lost', 'stopped')",
  processDelete: 'DELETE FROM agent_processes WHERE agent_id = @v1',
  processInsert: (rows) =>
    `INSERT INTO agent_processes (${PROCESS_COLUMNS}) VALUES ${valuesList(v, rows, 12)}`,
  processList: `SELECT ${PROCESS_COLUMNS} FROM agent_processes WHERE agent_id = @v1 ORDER BY slot`,
  processListState: `SELECT ${PROCESS_COLUMNS} FROM agent_processes WHERE state = @v1 ORDER BY agent_id, slot`,
  processSetState: 'UPDATE agent_processes SET state = @v2 WHERE agent_id = @v1',
  schedules: MSSQL_SCHEDULE_STATEMENTS,
  seen: MSSQL_SEEN_STATEMENTS,
};

/**
 * The schema lock, taken with `request.execute('sp_getapplock')` inside the migration
 * transaction and released by its COMMIT or ROLLBACK. sp_getapplock answers a timeout with a
 * negative return code rather than an error, which an RPC call can read; as T-SQL it would be
 * `EXEC sp_getapplock @Resource = N'ackcrawl_schema', @LockMode = N'Exclusive', …`.
 */
export const MSSQL_SCHEMA_LOCK = {
  procedure: 'sp_getapplock',
  resource: 'ackcrawl_schema',
  lockMode: 'Exclusive',
  lockOwner: 'Transaction',
  lockTimeoutMs: 120_000,
} as const;

/** The same call as T-SQL text, for the parser test and the docs. */
export function schemaLockAsTsql(): string {
  const l = MSSQL_SCHEMA_LOCK;
  return `EXEC ${l.procedure} @Resource = N'${l.resource}', @LockMode = N'${l.lockMode}', @LockOwner = N'${l.lockOwner}', @LockTimeout = ${l.lockTimeoutMs}`;
}
