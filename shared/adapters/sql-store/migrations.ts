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
export const KEY_LENGTHS = {
  id: 128,
  name: 200,
  code: 100,
  hash: 128,
  state: 16,
  /** Where the cleaner read a record it could not clean (`kafka:topic:partition:offset`). */
  source: 400,
  language: 16,
} as const;

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

/**
 * Version 5: cleaned results get real columns (`ackcrawl extract`, docs/extract.md), and the
 * records it could not clean a table of their own. Rows written before keep NULL in the new
 * columns. SQL Server's ALTER TABLE says ADD without COLUMN; SQLite adds one column per statement.
 */
function v5(dialect: SqlDialect): (t: Types) => string[] {
  return (t) => {
    const columns: [string, string][] = [
      ['title', t.text],
      ['author', t.text],
      ['published_at', t.bigint],
      ['language', t.key(KEY_LENGTHS.language)],
      ['description', t.text],
      ['canonical_url', t.text],
      ['main_text', t.text],
      ['fetched_at', t.bigint],
    ];
    const add = dialect === 'mssql' ? 'ADD' : 'ADD COLUMN';
    return [
      ...columns.map(([name, type]) => `ALTER TABLE results ${add} ${name} ${type} NULL`),
      `CREATE TABLE extract_failures (
      source ${t.key(KEY_LENGTHS.source)} NOT NULL,
      capture_id ${t.key(KEY_LENGTHS.id)} NULL,
      run_id ${t.key(KEY_LENGTHS.id)} NULL,
      url ${t.text} NULL,
      code ${t.key(KEY_LENGTHS.code)} NOT NULL,
      reason ${t.text} NOT NULL,
      at ${t.bigint} NOT NULL,
      CONSTRAINT extract_failures_pkey PRIMARY KEY (source)
    )`,
      'CREATE INDEX extract_failures_at ON extract_failures (at, source)',
    ];
  };
}

function perDialect(build: (t: Types) => string[]): Record<SqlDialect, string[]> {
  return { sqlite: build(TYPES.sqlite), postgres: build(TYPES.postgres), mssql: build(TYPES.mssql) };
}

/** 6: each run counts its not-modified pages (a recrawl's 304s, docs/recrawl.md). */
const V6_NOT_MODIFIED: Record<SqlDialect, string[]> = {
  sqlite: [`ALTER TABLE runs ADD COLUMN not_modified ${TYPES.sqlite.bigint} NOT NULL DEFAULT 0`],
  postgres: [`ALTER TABLE runs ADD COLUMN not_modified ${TYPES.postgres.bigint} NOT NULL DEFAULT 0`],
  // T-SQL has no COLUMN keyword here.
  mssql: [`ALTER TABLE runs ADD not_modified ${TYPES.mssql.bigint} NOT NULL DEFAULT 0`],
};

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'jobs, runs, logs, results, tokens', statements: perDialect(v1) },
  {
    version: 5,
    description: 'results columns of the cleaner; extract_failures',
    statements: {
      sqlite: v5('sqlite')(TYPES.sqlite),
      postgres: v5('postgres')(TYPES.postgres),
      mssql: v5('mssql')(TYPES.mssql),
    },
  },
  { version: 6, description: 'runs count not-modified pages', statements: V6_NOT_MODIFIED },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
