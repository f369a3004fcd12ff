import type { SqlDialect } from './driver.js';

/**
 * The schema's history: one list for every dialect. A migration is applied once, in a
 * transaction with the statement that records it in `ackcrawl_schema_version`, so it is applied
 * wholly or not at all (DDL is transactional on all three databases). Never edit a released
 * migration: add the next one.
 *
 * The dialects differ in types only, so each migration is written once against the type names
 * below. SQL Server compares text case-insensitively by default; its text columns take a binary
 * collation so that ids and names compare and sort as they do on SQLite and PostgreSQL.
 */
export interface Migration {
  version: number;
  description: string;
  statements: Readonly<Record<SqlDialect, readonly string[]>>;
}

interface Types {
  /** Ids, names and codes: short, indexed, compared exactly. */
  key: (length: number) => string;
  /** Unbounded text (URLs, errors, JSON). */
  text: string;
  /** Milliseconds since the epoch and counters. */
  bigint: string;
  int: string;
  float: string;
  bool: string;
  /** A growing integer primary key. */
  serial: string;
}

const TYPES: Readonly<Record<SqlDialect, Types>> = {
  sqlite: {
    key: () => 'TEXT',
    text: 'TEXT',
    bigint: 'INTEGER',
    int: 'INTEGER',
    float: 'REAL',
    bool: 'INTEGER',
    serial: 'INTEGER PRIMARY KEY',
  },
  postgres: {
    key: (n) => `VARCHAR(${n})`,
    text: 'TEXT',
    bigint: 'BIGINT',
    int: 'INTEGER',
    float: 'DOUBLE PRECISION',
    bool: 'SMALLINT',
    serial: 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
  },
  mssql: {
    key: (n) => `NVARCHAR(${n}) COLLATE Latin1_General_100_BIN2`,
    text: 'NVARCHAR(MAX)',
    bigint: 'BIGINT',
    int: 'INT',
    float: 'FLOAT',
    bool: 'BIT',
    serial: 'BIGINT IDENTITY(1,1) PRIMARY KEY',
  },
};

/** Longest values the key columns hold; the store checks them before SQL does. */
export const KEY_LENGTHS = { id: 128, name: 200, code: 100, hash: 128, state: 16 } as const;

function v1(t: Types): string[] {
  const id = t.key(KEY_LENGTHS.id);
  return [
    `CREATE TABLE jobs (
      id ${id} NOT NULL,
      name ${t.key(KEY_LENGTHS.name)} NOT NULL,
      settings ${t.text} NOT NULL,
      created_at ${t.bigint} NOT NULL,
      updated_at ${t.bigint} NOT NULL,
      CONSTRAINT jobs_pkey PRIMARY KEY (id),
      CONSTRAINT jobs_name_key UNIQUE (name)
    )`,
    'CREATE INDEX jobs_created ON jobs (created_at, id)',
    `CREATE TABLE runs (
      id ${id} NOT NULL,
      job_id ${id} NOT NULL,
      state ${t.key(KEY_LENGTHS.state)} NOT NULL,
      settings ${t.text} NOT NULL,
      done ${t.bigint} NOT NULL,
      failed ${t.bigint} NOT NULL,
      queued ${t.bigint} NOT NULL,
      in_flight ${t.bigint} NOT NULL,
      pages_per_second ${t.float} NOT NULL,
      created_at ${t.bigint} NOT NULL,
      started_at ${t.bigint} NULL,
      ended_at ${t.bigint} NULL,
      scheduler_id ${id} NULL,
      heartbeat_at ${t.bigint} NULL,
      error ${t.text} NULL,
      CONSTRAINT runs_pkey PRIMARY KEY (id)
    )`,
    'CREATE INDEX runs_created ON runs (created_at, id)',
    'CREATE INDEX runs_job ON runs (job_id, created_at, id)',
    'CREATE INDEX runs_state ON runs (state, created_at, id)',
    `CREATE TABLE logs (
      id ${t.serial},
      run_id ${id} NOT NULL,
      url ${t.text} NOT NULL,
      code ${t.key(KEY_LENGTHS.code)} NOT NULL,
      attempts ${t.int} NOT NULL,
      last_error ${t.text} NOT NULL,
      final ${t.bool} NOT NULL,
      at ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX logs_run ON logs (run_id, id)',
    'CREATE INDEX logs_run_final ON logs (run_id, final, id)',
    `CREATE TABLE results (
      capture_id ${id} NOT NULL,
      run_id ${id} NOT NULL,
      job_id ${id} NOT NULL,
      url ${t.text} NOT NULL,
      status ${t.int} NULL,
      data ${t.text} NOT NULL,
      at ${t.bigint} NOT NULL,
      CONSTRAINT results_pkey PRIMARY KEY (capture_id)
    )`,
    'CREATE INDEX results_run ON results (run_id, at, capture_id)',
    `CREATE TABLE tokens (
      id ${id} NOT NULL,
      name ${t.key(KEY_LENGTHS.name)} NOT NULL,
      scopes ${t.key(KEY_LENGTHS.name)} NOT NULL,
      hash ${t.key(KEY_LENGTHS.hash)} NOT NULL,
      created_at ${t.bigint} NOT NULL,
      revoked_at ${t.bigint} NULL,
      last_used_at ${t.bigint} NULL,
      CONSTRAINT tokens_pkey PRIMARY KEY (id),
      CONSTRAINT tokens_hash_key UNIQUE (hash)
    )`,
    'CREATE INDEX tokens_created ON tokens (created_at, id)',
  ];
}

/** The fleet: host agents (their desired state and last heartbeat) and their crawler processes. */
function v2(t: Types): string[] {
  const id = t.key(KEY_LENGTHS.id);
  return [
    `CREATE TABLE agents (
      id ${id} NOT NULL,
      name ${t.key(KEY_LENGTHS.name)} NOT NULL,
      hostname ${t.key(KEY_LENGTHS.name)} NOT NULL,
      url ${t.text} NOT NULL,
      state ${t.key(KEY_LENGTHS.state)} NOT NULL,
      facts ${t.text} NOT NULL,
      last_heartbeat_at ${t.bigint} NOT NULL,
      registered_at ${t.bigint} NOT NULL,
      desired_processes ${t.int} NOT NULL,
      drain ${t.bool} NOT NULL,
      orders ${t.text} NOT NULL,
      CONSTRAINT agents_pkey PRIMARY KEY (id)
    )`,
    'CREATE INDEX agents_registered ON agents (registered_at, id)',
    'CREATE INDEX agents_state ON agents (state, last_heartbeat_at)',
    `CREATE TABLE agent_processes (
      agent_id ${id} NOT NULL,
      slot ${t.int} NOT NULL,
      pid ${t.int} NULL,
      state ${t.key(KEY_LENGTHS.state)} NOT NULL,
      started_at ${t.bigint} NULL,
      restarts ${t.int} NOT NULL,
      in_flight ${t.int} NOT NULL,
      pages_done ${t.bigint} NOT NULL,
      errors ${t.bigint} NOT NULL,
      rss_bytes ${t.bigint} NOT NULL,
      cpu_seconds ${t.float} NOT NULL,
      reported_at ${t.bigint} NOT NULL,
      CONSTRAINT agent_processes_pkey PRIMARY KEY (agent_id, slot)
    )`,
    'CREATE INDEX agent_processes_state ON agent_processes (state, agent_id, slot)',
  ];
}

function perDialect(build: (t: Types) => string[]): Record<SqlDialect, string[]> {
  return { sqlite: build(TYPES.sqlite), postgres: build(TYPES.postgres), mssql: build(TYPES.mssql) };
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'jobs, runs, logs, results, tokens', statements: perDialect(v1) },
  { version: 2, description: 'agents and their crawler processes', statements: perDialect(v2) },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
