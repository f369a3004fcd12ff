import Database from 'better-sqlite3';
import { StorageError } from '../../errors.js';
import { enterWalMode } from '../sqlite-wal.js';

/** Task states as stored. Small ints keep the rows and the partial indexes small. */
export const State = { queued: 0, leased: 1, done: 2, failed: 3, cancelled: 4 } as const;
export type StateValue = (typeof State)[keyof typeof State];

/** A run's control state as stored in `runs`. */
export const RunStateValue = { active: 0, paused: 1, cancelled: 2 } as const;

export const SCHEMA_VERSION = 4;

/**
 * Each entry takes the schema from version `index` to `index + 1`. A run's rows stay until it is
 * retired (its end recorded in SQL, `ackcrawl serve`), so the `(run_id, url)` unique index is each
 * run's seen-set, on disk; a retired run's rows are then deleted in the background (run-sweeper.ts),
 * its counters kept in `runs.final_counts`.
 *
 * The partial indexes carry `state` as a literal so the planner can prove they apply:
 * - tasks_ready: lease() walks one level of it in id order; available_at, host and run_id are in
 *   the index so skipping delayed tasks, excluded hosts and paused runs needs no table lookup.
 * - tasks_delayed: stats() counts queued tasks whose available_at is still ahead.
 * - tasks_leased: lease() requeues expired leases, stats() counts them.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tasks (
    id            INTEGER PRIMARY KEY,
    url           TEXT    NOT NULL UNIQUE,
    host          TEXT    NOT NULL,
    depth         INTEGER NOT NULL,
    priority      INTEGER NOT NULL,
    parent_url    TEXT,
    state         INTEGER NOT NULL,
    attempt       INTEGER NOT NULL,
    available_at  INTEGER NOT NULL,
    lease_id      TEXT,
    lease_expires INTEGER,
    last_error    TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
  );
  CREATE INDEX tasks_ready ON tasks (priority DESC, id, available_at, host) WHERE state = 0;
  CREATE INDEX tasks_delayed ON tasks (available_at) WHERE state = 0;
  CREATE INDEX tasks_leased ON tasks (lease_expires) WHERE state = 1;
  `,
  // 2: what the task is (NULL: a page) and a sitemap's lastmod for it.
  `
  ALTER TABLE tasks ADD COLUMN kind TEXT;
  ALTER TABLE tasks ADD COLUMN lastmod TEXT;
  `,
  // 3: runs. Every task belongs to a run, whose seen-set is its own; a level column replaces the
  // priority order (priority levels, see task-priority.ts); a run's control state in \`runs\`.
  // The tasks of a file from before runs become run 'default' (DEFAULT_RUN_ID), their old
  // priority (0 for seeds, -depth for links) mapped to the level the scheduler now gives them.
  `
  CREATE TABLE tasks_v3 (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    NOT NULL,
    url           TEXT    NOT NULL,
    host          TEXT    NOT NULL,
    depth         INTEGER NOT NULL,
    priority      INTEGER NOT NULL,
    level         INTEGER NOT NULL,
    parent_url    TEXT,
    kind          TEXT,
    lastmod       TEXT,
    state         INTEGER NOT NULL,
    attempt       INTEGER NOT NULL,
    available_at  INTEGER NOT NULL,
    lease_id      TEXT,
    lease_expires INTEGER,
    last_error    TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
  );
  INSERT INTO tasks_v3
    (id, run_id, url, host, depth, priority, level, parent_url, kind, lastmod, state, attempt,
     available_at, lease_id, lease_expires, last_error, created_at, updated_at)
  SELECT id, 'default', url, host, depth, MAX(0, MIN(3, 3 + priority)), MAX(0, MIN(3, 3 + priority)),
    parent_url, kind, lastmod, state, attempt, available_at, lease_id, lease_expires, last_error,
    created_at, updated_at
  FROM tasks;
  DROP TABLE tasks;
  ALTER TABLE tasks_v3 RENAME TO tasks;
  CREATE UNIQUE INDEX tasks_seen ON tasks (run_id, url);
  CREATE INDEX tasks_ready ON tasks (level, id, available_at, host, run_id) WHERE state = 0;
  CREATE INDEX tasks_delayed ON tasks (available_at, run_id) WHERE state = 0;
  CREATE INDEX tasks_leased ON tasks (lease_expires, run_id) WHERE state = 1;
  CREATE TABLE runs (
    run_id     TEXT    PRIMARY KEY,
    state      INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO runs (run_id, state, updated_at) SELECT DISTINCT 'default', 0, 0 FROM tasks;
  `,
  // 4: retired runs (over, their end recorded in SQL): their counters as JSON, their tasks deleted.
  `
  ALTER TABLE runs ADD COLUMN retired INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE runs ADD COLUMN final_counts TEXT;
  `,
];

/**
 * How a commit reaches the disk. `full`: a commit is on disk when it returns, so neither kill -9
 * nor a power cut loses it. `normal` (WAL): a commit survives kill -9 of any process but the last
 * ones may roll back on a power cut; right when something else can replay them, as the embedded
 * scheduler does from its fdatasynced record files (see scheduler/main.ts).
 */
export type SqliteDurability = 'full' | 'normal';

/**
 * Opens (creating if needed) the frontier file in WAL mode with synchronous=FULL by default: a commit is on
 * disk when it returns, so neither kill -9 nor a power cut loses an acknowledged call. Callers
 * batch settlements, which keeps the number of fsyncs low. The page cache mostly serves the `url`
 * index, which every push probes at a random place: SQLite's 2 MiB default makes most probes a
 * read() from the OS cache.
 */
export function openDatabase(
  path: string,
  cacheSizeMb: number,
  durability: SqliteDurability = 'full',
): Database.Database {
  const db = new Database(path, { timeout: 5_000 });
  try {
    enterWalMode(db, 5_000);
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
    // A negative cache_size is in KiB. Fixed, so memory stays flat however large the file grows.
    db.pragma(`cache_size = ${-Math.round(cacheSizeMb * 1024)}`);
    migrate(db, path);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID');
    const row = db
      .prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema_version'")
      .get();
    const version = row === undefined ? 0 : Number(row.value);
    if (!Number.isInteger(version) || version < 0 || version > SCHEMA_VERSION) {
      throw new StorageError(
        'FRONTIER_SCHEMA',
        `frontier file ${path} has schema version ${row?.value ?? '?'}, this build reads up to ${SCHEMA_VERSION}`,
        { details: { path } },
      );
    }
    if (version === SCHEMA_VERSION) return;
    for (let v = version; v < SCHEMA_VERSION; v += 1) {
      db.exec(MIGRATIONS[v] ?? '');
    }
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)").run(
      String(SCHEMA_VERSION),
    );
  }).immediate();
}
