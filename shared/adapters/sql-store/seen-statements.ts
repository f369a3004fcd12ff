import { placeholderList, valuesList, type UpsertStrategy } from './statements.js';

/** The most URL keys one statement of the shared seen-set binds (SQL Server takes 2,100 parameters). */
export const SEEN_CHUNK = 300;

/**
 * How a batch of URL keys is claimed: one `INSERT … ON CONFLICT DO NOTHING RETURNING` (SQLite and
 * PostgreSQL return only the rows they inserted), or, on SQL Server, in one transaction, a
 * `SELECT … WITH (UPDLOCK, HOLDLOCK)` of the keys already there, whose key-range locks keep any
 * other writer from inserting them until COMMIT, and an `INSERT` of the others.
 */
export type SeenClaim =
  | { kind: 'returning'; claim(rows: number): string }
  | { kind: 'lock-then-insert'; lock(keys: number): string; insert(rows: number): string };

/**
 * The shared seen-set of the RabbitMQ frontier when hosts are split among schedulers (migration 9):
 * which URLs (by key) a run accepted, whichever scheduler accepted them.
 */
export interface SeenStatements {
  /** scope, run_id, then `keys` url keys: those of them already seen */
  seenKnown(keys: number): string;
  /** claim: `rows` rows of scope, run_id, url_key, scheduler_id, at; lock: scope, run_id, keys */
  seenClaim: SeenClaim;
  /** scope, run_id: every key of the run, forgotten */
  seenForget: string;
  /** scope, run_id: how many keys the run has */
  seenCount: string;
  /**
   * A scheduler's counters of a run (migration 10), written whole: scope, run_id, scheduler_id,
   * total, done, failed, at. SQL Server: an UPDATE holding a key-range lock, then an INSERT when it
   * touched no row, in one transaction (see mssql-statements.ts).
   */
  countsUpsert: UpsertStrategy;
  /** scope: every scheduler's counters of every run of the prefix */
  countsList: string;
  /** scope, run_id: every scheduler's counters of the run, forgotten */
  countsForget: string;
}

const SEEN_INSERT = 'INSERT INTO frontier_seen (scope, run_id, url_key, scheduler_id, at) VALUES';
const COUNTS_COLUMNS = 'scope, run_id, scheduler_id, total, done, failed, at';
const COUNTS_INSERT = `INSERT INTO frontier_counts (${COUNTS_COLUMNS}) VALUES`;

const $ = (n: number): string => `$${n}`;
const v = (n: number): string => `@v${n}`;

export const ANSI_SEEN_STATEMENTS: SeenStatements = {
  seenKnown: (keys) =>
    `SELECT url_key FROM frontier_seen WHERE scope = $1 AND run_id = $2 AND url_key IN (${placeholderList($, 3, keys)})`,
  seenClaim: {
    kind: 'returning',
    claim: (rows) =>
      `${SEEN_INSERT} ${valuesList($, rows, 5)} ON CONFLICT (scope, run_id, url_key) DO NOTHING RETURNING url_key`,
  },
  seenForget: 'DELETE FROM frontier_seen WHERE scope = $1 AND run_id = $2',
  seenCount: 'SELECT COUNT(*) AS n FROM frontier_seen WHERE scope = $1 AND run_id = $2',
  countsUpsert: {
    kind: 'single',
    sql:
      `${COUNTS_INSERT} (${placeholderList($, 1, 7)}) ON CONFLICT (scope, run_id, scheduler_id) DO UPDATE ` +
      'SET total = excluded.total, done = excluded.done, failed = excluded.failed, at = excluded.at',
  },
  countsList: `SELECT ${COUNTS_COLUMNS} FROM frontier_counts WHERE scope = $1`,
  countsForget: 'DELETE FROM frontier_counts WHERE scope = $1 AND run_id = $2',
};

export const MSSQL_SEEN_STATEMENTS: SeenStatements = {
  seenKnown: (keys) =>
    `SELECT url_key FROM frontier_seen WHERE scope = @v1 AND run_id = @v2 AND url_key IN (${placeholderList(v, 3, keys)})`,
  seenClaim: {
    kind: 'lock-then-insert',
    lock: (keys) =>
      `SELECT url_key FROM frontier_seen WITH (UPDLOCK, HOLDLOCK) WHERE scope = @v1 AND run_id = @v2 AND url_key IN (${placeholderList(v, 3, keys)})`,
    insert: (rows) => `${SEEN_INSERT} ${valuesList(v, rows, 5)}`,
  },
  seenForget: 'DELETE FROM frontier_seen WHERE scope = @v1 AND run_id = @v2',
  seenCount: 'SELECT COUNT(*) AS n FROM frontier_seen WHERE scope = @v1 AND run_id = @v2',
  countsUpsert: {
    kind: 'update-then-insert',
    update:
      'UPDATE frontier_counts WITH (UPDLOCK, SERIALIZABLE) SET total = @v4, done = @v5, failed = @v6, at = @v7 ' +
      'WHERE scope = @v1 AND run_id = @v2 AND scheduler_id = @v3',
    insert: `${COUNTS_INSERT} (${placeholderList(v, 1, 7)})`,
  },
  countsList: `SELECT ${COUNTS_COLUMNS} FROM frontier_counts WHERE scope = @v1`,
  countsForget: 'DELETE FROM frontier_counts WHERE scope = @v1 AND run_id = @v2',
};
