import type Database from 'better-sqlite3';

export interface TaskRow {
  id: number;
  run_id: string;
  url: string;
  host: string;
  depth: number;
  priority: number;
  parent_url: string | null;
  kind: string | null;
  lastmod: string | null;
  attempt: number;
  last_error: string | null;
}

/** A row an update changed: its run and the state it is in now. */
export interface ChangedRow {
  run_id: string;
  state: number;
}

interface Count {
  n: number;
}

/** The state a task put back goes to: queued, or cancelled when its run was cancelled meanwhile. */
const BACK_STATE = `CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.run_id = tasks.run_id AND r.state = 2)
  THEN 4 ELSE 0 END`;

const TASK_COLUMNS = `id, run_id, url, host, depth, priority, parent_url, kind, lastmod, attempt, last_error`;

/** Every statement the frontier runs, prepared once at open. States are literals (see sqlite-schema.ts). */
export function prepareStatements(db: Database.Database) {
  return {
    /** (run_id, url, host, depth, priority, level, parent_url, kind, lastmod, now, now, now) */
    insert: db.prepare<
      [
        string,
        string,
        string,
        number,
        number,
        number,
        string | null,
        string | null,
        string | null,
        number,
        number,
        number,
      ]
    >(
      `INSERT OR IGNORE INTO tasks
         (run_id, url, host, depth, priority, level, parent_url, kind, lastmod, state, attempt,
          available_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?, ?)`,
    ),
    /** (now, now, now): expired leases back to queued (cancelled if their run was), ready at once; attempt unchanged. */
    requeueExpired: db.prepare<[number, number, number], ChangedRow>(
      `UPDATE tasks SET state = ${BACK_STATE}, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE state = 1 AND lease_expires <= ?
       RETURNING run_id, state`,
    ),
    /** (level, now, excludeHostsJson, pausedRunsJson, limit): one level, oldest first. */
    selectReady: db.prepare<[number, number, string, string, number], TaskRow>(
      `SELECT ${TASK_COLUMNS} FROM tasks
       WHERE state = 0 AND level = ? AND available_at <= ?
         AND host NOT IN (SELECT value FROM json_each(?))
         AND run_id NOT IN (SELECT value FROM json_each(?))
       ORDER BY id LIMIT ?`,
    ),
    /** (leaseId, leaseExpires, now, id) */
    markLeased: db.prepare<[string, number, number, number]>(
      `UPDATE tasks SET state = 1, lease_id = ?, lease_expires = ?, updated_at = ? WHERE id = ? AND state = 0`,
    ),
    /** (now, id, leaseId) */
    ack: db.prepare<[number, number, string], ChangedRow>(
      `UPDATE tasks SET state = 2, lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?
       RETURNING run_id, state`,
    ),
    /** (availableAt, lastError, now, id, leaseId) */
    retry: db.prepare<[number, string, number, number, string], ChangedRow>(
      `UPDATE tasks SET state = ${BACK_STATE}, attempt = attempt + 1, available_at = ?, last_error = ?,
         lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?
       RETURNING run_id, state`,
    ),
    /** (lastError, now, id, leaseId) */
    fail: db.prepare<[string, number, number, string], ChangedRow>(
      `UPDATE tasks SET state = 3, last_error = ?, lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?
       RETURNING run_id, state`,
    ),
    /** (now, now, id, leaseId): back to queued (or cancelled), ready at once, attempt unchanged. */
    release: db.prepare<[number, number, number, string], ChangedRow>(
      `UPDATE tasks SET state = ${BACK_STATE}, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE id = ? AND state = 1 AND lease_id = ?
       RETURNING run_id, state`,
    ),
    /** (now, now) */
    releaseAll: db.prepare<[number, number], ChangedRow>(
      `UPDATE tasks SET state = ${BACK_STATE}, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE state = 1
       RETURNING run_id, state`,
    ),
    /** (leaseExpires, now, id, leaseId): extends, never shortens. */
    renew: db.prepare<[number, number, number, string]>(
      `UPDATE tasks SET lease_expires = MAX(lease_expires, ?), updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (now, runId): a cancelled run's queued tasks. */
    cancelQueued: db.prepare<[number, string]>(
      `UPDATE tasks SET state = 4, updated_at = ? WHERE run_id = ? AND state = 0`,
    ),
    /** (runId, url) */
    known: db.prepare<[string, string], { one: number }>(
      `SELECT 1 AS one FROM tasks WHERE run_id = ? AND url = ?`,
    ),
    /** (runId, url) */
    /** (now, now, run_id, url): a failed task back to queued as a fresh one (attempt 1), ready at once. */
    requeueFailed: db.prepare<[number, number, string, string]>(
      `UPDATE tasks SET state = 0, attempt = 1, available_at = ?, updated_at = ?, last_error = NULL
       WHERE run_id = ? AND url = ? AND state = 3`,
    ),
    inspect: db.prepare<
      [string, string],
      {
        url: string;
        state: number;
        attempt: number;
        last_error: string | null;
        available_at: number;
        depth: number;
        parent_url: string | null;
      }
    >(
      `SELECT url, state, attempt, last_error, available_at, depth, parent_url FROM tasks
       WHERE run_id = ? AND url = ?`,
    ),
    /** (now) */
    countDelayed: db.prepare<[number], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 0 AND available_at > ?`,
    ),
    /** (now, runId): `+run_id` keeps the planner on tasks_delayed (the run's rows may be many). */
    countDelayedOfRun: db.prepare<[number, string], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 0 AND available_at > ? AND +run_id = ?`,
    ),
    /** (now) */
    countExpired: db.prepare<[number], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 1 AND lease_expires <= ?`,
    ),
    /** (now, runId) */
    countExpiredOfRun: db.prepare<[number, string], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 1 AND lease_expires <= ? AND +run_id = ?`,
    ),
    countByRunAndState: db.prepare<[], { run_id: string; state: number; n: number }>(
      `SELECT run_id, state, COUNT(*) AS n FROM tasks GROUP BY run_id, state`,
    ),
    runs: db.prepare<[], { run_id: string; state: number; retired: number; final_counts: string | null }>(
      `SELECT run_id, state, retired, final_counts FROM runs`,
    ),
    /** (finalCountsJson, now, runId) */
    retire: db.prepare<[string, number, string]>(
      `UPDATE runs SET retired = 1, final_counts = ?, updated_at = ? WHERE run_id = ?`,
    ),
    /** (finalCountsJson, runId) */
    setFinalCounts: db.prepare<[string, string]>(`UPDATE runs SET final_counts = ? WHERE run_id = ?`),
    /** (runId, limit): a retired run's tasks, but for those leased (their outcomes still come). */
    sweepTasks: db.prepare<[string, number]>(
      `DELETE FROM tasks WHERE id IN (SELECT id FROM tasks WHERE run_id = ? AND state <> 1 LIMIT ?)`,
    ),
    /** (runId) */
    anyTaskOfRun: db.prepare<[string], { one: number }>(
      `SELECT 1 AS one FROM tasks WHERE run_id = ? LIMIT 1`,
    ),
    /** (runId, state, now) */
    setRunState: db.prepare<[string, number, number]>(
      `INSERT INTO runs (run_id, state, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    ),
    /** (runId, now): a run first seen in a push, active. */
    addRun: db.prepare<[string, number]>(
      `INSERT OR IGNORE INTO runs (run_id, state, updated_at) VALUES (?, 0, ?)`,
    ),
    getMeta: db.prepare<[string], { value: string }>(`SELECT value FROM meta WHERE key = ?`),
    setMeta: db.prepare<[string, string]>(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
