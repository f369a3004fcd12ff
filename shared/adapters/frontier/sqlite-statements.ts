import type Database from 'better-sqlite3';

export interface TaskRow {
  id: number;
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

interface Count {
  n: number;
}

/** Every statement the frontier runs, prepared once at open. States are literals (see sqlite-schema.ts). */
export function prepareStatements(db: Database.Database) {
  return {
    /** (url, host, depth, priority, parent_url, kind, lastmod, now, now, now) */
    insert: db.prepare<
      [string, string, number, number, string | null, string | null, string | null, number, number, number]
    >(
      `INSERT OR IGNORE INTO tasks
         (url, host, depth, priority, parent_url, kind, lastmod, state, attempt, available_at,
          created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?, ?)`,
    ),
    /** (now, now, now): expired leases back to queued, ready at once; attempt unchanged. */
    requeueExpired: db.prepare<[number, number, number]>(
      `UPDATE tasks SET state = 0, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE state = 1 AND lease_expires <= ?`,
    ),
    /** (now, excludeHostsJson, limit) */
    selectReady: db.prepare<[number, string, number], TaskRow>(
      `SELECT id, url, host, depth, priority, parent_url, kind, lastmod, attempt, last_error FROM tasks
       WHERE state = 0 AND available_at <= ? AND host NOT IN (SELECT value FROM json_each(?))
       ORDER BY priority DESC, id LIMIT ?`,
    ),
    /** (leaseId, leaseExpires, now, id) */
    markLeased: db.prepare<[string, number, number, number]>(
      `UPDATE tasks SET state = 1, lease_id = ?, lease_expires = ?, updated_at = ? WHERE id = ? AND state = 0`,
    ),
    /** (now, id, leaseId) */
    ack: db.prepare<[number, number, string]>(
      `UPDATE tasks SET state = 2, lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (availableAt, lastError, now, id, leaseId) */
    retry: db.prepare<[number, string, number, number, string]>(
      `UPDATE tasks SET state = 0, attempt = attempt + 1, available_at = ?, last_error = ?,
         lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (lastError, now, id, leaseId) */
    fail: db.prepare<[string, number, number, string]>(
      `UPDATE tasks SET state = 3, last_error = ?, lease_id = NULL, lease_expires = NULL, updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (now, now, id, leaseId): back to queued, ready at once, attempt unchanged. */
    release: db.prepare<[number, number, number, string]>(
      `UPDATE tasks SET state = 0, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (now, now) */
    releaseAll: db.prepare<[number, number]>(
      `UPDATE tasks SET state = 0, lease_id = NULL, lease_expires = NULL, updated_at = ?,
         available_at = MIN(available_at, ?)
       WHERE state = 1`,
    ),
    /** (leaseExpires, now, id, leaseId): extends, never shortens. */
    renew: db.prepare<[number, number, number, string]>(
      `UPDATE tasks SET lease_expires = MAX(lease_expires, ?), updated_at = ?
       WHERE id = ? AND state = 1 AND lease_id = ?`,
    ),
    /** (url) */
    known: db.prepare<[string], { one: number }>(`SELECT 1 AS one FROM tasks WHERE url = ?`),
    /** (url) */
    inspect: db.prepare<
      [string],
      {
        url: string;
        state: number;
        attempt: number;
        last_error: string | null;
        available_at: number;
        depth: number;
        parent_url: string | null;
      }
    >(`SELECT url, state, attempt, last_error, available_at, depth, parent_url FROM tasks WHERE url = ?`),
    /** (now) */
    countDelayed: db.prepare<[number], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 0 AND available_at > ?`,
    ),
    /** (now) */
    countExpired: db.prepare<[number], Count>(
      `SELECT COUNT(*) AS n FROM tasks WHERE state = 1 AND lease_expires <= ?`,
    ),
    countByState: db.prepare<[], { state: number; n: number }>(
      `SELECT state, COUNT(*) AS n FROM tasks GROUP BY state`,
    ),
    getMeta: db.prepare<[string], { value: string }>(`SELECT value FROM meta WHERE key = ?`),
    setMeta: db.prepare<[string, string]>(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
