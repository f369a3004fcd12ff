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
  /** An alert's subject (`agentId/processId`, a queue name) and its dedupe key (rule + subject + how). */
  subject: 300,
  dedupe: 450,
  /** A URL's key in the shared seen-set: 32 hex digits of its SHA-256. */
  urlKey: 32,
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

/**
 * Alerting: rules, the alerts they raised, webhook endpoints and their deliveries, and the indexes
 * the alert engine reads runs and logs by. An alert's `dedupe_key` is unique and never null: while
 * active it is `rule|subject|active`, so a second active alert on the same subject is a conflict;
 * resolving rewrites it to `rule|subject|<alert id>`, which frees the subject for the next one.
 */
function v4(t: Types): string[] {
  const id = t.key(KEY_LENGTHS.id);
  return [
    `CREATE TABLE alert_rules (
      id ${id} NOT NULL,
      name ${t.key(KEY_LENGTHS.name)} NOT NULL,
      kind ${t.key(KEY_LENGTHS.code)} NOT NULL,
      params ${t.text} NOT NULL,
      enabled ${t.bool} NOT NULL,
      created_at ${t.bigint} NOT NULL,
      updated_at ${t.bigint} NOT NULL,
      CONSTRAINT alert_rules_pkey PRIMARY KEY (id),
      CONSTRAINT alert_rules_name_key UNIQUE (name)
    )`,
    'CREATE INDEX alert_rules_created ON alert_rules (created_at, id)',
    `CREATE TABLE alerts (
      id ${id} NOT NULL,
      rule_id ${id} NOT NULL,
      subject ${t.key(KEY_LENGTHS.subject)} NOT NULL,
      event_type ${t.key(KEY_LENGTHS.code)} NOT NULL,
      state ${t.key(KEY_LENGTHS.state)} NOT NULL,
      dedupe_key ${t.key(KEY_LENGTHS.dedupe)} NOT NULL,
      data ${t.text} NOT NULL,
      opened_at ${t.bigint} NOT NULL,
      resolved_at ${t.bigint} NULL,
      CONSTRAINT alerts_pkey PRIMARY KEY (id),
      CONSTRAINT alerts_dedupe_key UNIQUE (dedupe_key)
    )`,
    'CREATE INDEX alerts_opened ON alerts (opened_at, id)',
    'CREATE INDEX alerts_state ON alerts (state, opened_at, id)',
    `CREATE TABLE webhooks (
      id ${id} NOT NULL,
      url ${t.text} NOT NULL,
      description ${t.text} NOT NULL,
      secret ${t.text} NOT NULL,
      event_types ${t.text} NOT NULL,
      enabled ${t.bool} NOT NULL,
      disabled_reason ${t.text} NULL,
      created_at ${t.bigint} NOT NULL,
      updated_at ${t.bigint} NOT NULL,
      CONSTRAINT webhooks_pkey PRIMARY KEY (id)
    )`,
    'CREATE INDEX webhooks_created ON webhooks (created_at, id)',
    `CREATE TABLE webhook_deliveries (
      id ${id} NOT NULL,
      webhook_id ${id} NOT NULL,
      alert_id ${id} NULL,
      event_type ${t.key(KEY_LENGTHS.code)} NOT NULL,
      body ${t.text} NOT NULL,
      state ${t.key(KEY_LENGTHS.state)} NOT NULL,
      attempts ${t.int} NOT NULL,
      next_attempt_at ${t.bigint} NULL,
      last_status ${t.int} NULL,
      last_error ${t.text} NULL,
      created_at ${t.bigint} NOT NULL,
      updated_at ${t.bigint} NOT NULL,
      delivered_at ${t.bigint} NULL,
      CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id)
    )`,
    'CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at, id)',
    'CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id)',
    'CREATE INDEX runs_ended ON runs (ended_at, id)',
    'CREATE INDEX logs_at ON logs (at)',
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

/**
 * 3: cron schedules of jobs (one per job) and the fire times they claimed. The primary key of
 * `schedule_fires` is what makes a fire time start at most one run across masters: each master
 * inserts (schedule id, fire time) if absent, and only the one whose insert landed goes on.
 */
function v3(t: Types): string[] {
  const id = t.key(KEY_LENGTHS.id);
  return [
    `CREATE TABLE schedules (
      id ${id} NOT NULL,
      job_id ${id} NOT NULL,
      expression ${t.key(KEY_LENGTHS.name)} NOT NULL,
      time_zone ${t.key(KEY_LENGTHS.code)} NOT NULL,
      overlap ${t.key(KEY_LENGTHS.state)} NOT NULL,
      misfire ${t.key(KEY_LENGTHS.state)} NOT NULL,
      enabled ${t.bool} NOT NULL,
      waiting_fire_at ${t.bigint} NULL,
      created_at ${t.bigint} NOT NULL,
      updated_at ${t.bigint} NOT NULL,
      CONSTRAINT schedules_pkey PRIMARY KEY (id),
      CONSTRAINT schedules_job_key UNIQUE (job_id)
    )`,
    'CREATE INDEX schedules_created ON schedules (created_at, id)',
    `CREATE TABLE schedule_fires (
      schedule_id ${id} NOT NULL,
      fire_at ${t.bigint} NOT NULL,
      claimed_at ${t.bigint} NOT NULL,
      claimed_by ${id} NOT NULL,
      outcome ${t.key(KEY_LENGTHS.state)} NOT NULL,
      run_id ${id} NULL,
      missed ${t.int} NOT NULL,
      CONSTRAINT schedule_fires_pkey PRIMARY KEY (schedule_id, fire_at)
    )`,
  ];
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

/**
 * 7: a run made by a schedule names the schedule and the fire time it was made for (both NULL for a
 * run made through the API, and in rows written before).
 */
const V7_SCHEDULED_BY: Record<SqlDialect, string[]> = {
  sqlite: [
    `ALTER TABLE runs ADD COLUMN schedule_id ${TYPES.sqlite.key(KEY_LENGTHS.id)} NULL`,
    `ALTER TABLE runs ADD COLUMN fire_at ${TYPES.sqlite.bigint} NULL`,
  ],
  postgres: [
    `ALTER TABLE runs ADD COLUMN schedule_id ${TYPES.postgres.key(KEY_LENGTHS.id)} NULL`,
    `ALTER TABLE runs ADD COLUMN fire_at ${TYPES.postgres.bigint} NULL`,
  ],
  // T-SQL has no COLUMN keyword here.
  mssql: [
    `ALTER TABLE runs ADD schedule_id ${TYPES.mssql.key(KEY_LENGTHS.id)} NULL`,
    `ALTER TABLE runs ADD fire_at ${TYPES.mssql.bigint} NULL`,
  ],
};

/**
 * 8: a final failure a person sent back to its run (POST …/failures/{id}/retry) says when, and
 * when a scheduler put its URL back into the run's frontier (both NULL until then). The index
 * finds a run's retries still to be queued.
 */
const V8_LOG_RETRIES: Record<SqlDialect, string[]> = {
  sqlite: [
    `ALTER TABLE logs ADD COLUMN retried_at ${TYPES.sqlite.bigint} NULL`,
    `ALTER TABLE logs ADD COLUMN requeued_at ${TYPES.sqlite.bigint} NULL`,
    'CREATE INDEX logs_run_retry ON logs (run_id, requeued_at, retried_at)',
  ],
  postgres: [
    `ALTER TABLE logs ADD COLUMN retried_at ${TYPES.postgres.bigint} NULL`,
    `ALTER TABLE logs ADD COLUMN requeued_at ${TYPES.postgres.bigint} NULL`,
    'CREATE INDEX logs_run_retry ON logs (run_id, requeued_at, retried_at)',
  ],
  // T-SQL has no COLUMN keyword here.
  mssql: [
    `ALTER TABLE logs ADD retried_at ${TYPES.mssql.bigint} NULL`,
    `ALTER TABLE logs ADD requeued_at ${TYPES.mssql.bigint} NULL`,
    'CREATE INDEX logs_run_retry ON logs (run_id, requeued_at, retried_at)',
  ],
};

/**
 * 9: the RabbitMQ frontier's seen-set shared by the schedulers of a prefix when hosts are split
 * among them (docs/cluster.md): one row per URL a run accepted, under a key of the URL (its
 * SHA-256, 32 hex digits), whichever scheduler claimed it first.
 */
function v9(t: Types): string[] {
  return [
    `CREATE TABLE frontier_seen (
      scope ${t.key(KEY_LENGTHS.name)} NOT NULL,
      run_id ${t.key(KEY_LENGTHS.id)} NOT NULL,
      url_key ${t.key(KEY_LENGTHS.urlKey)} NOT NULL,
      scheduler_id ${t.key(KEY_LENGTHS.id)} NOT NULL,
      at ${t.bigint} NOT NULL,
      PRIMARY KEY (scope, run_id, url_key)
    )`,
  ];
}

/**
 * 10: each scheduler's ledger counters per run, written at its heartbeats when hosts are split
 * among schedulers (docs/cluster.md): a run's counters are the sum over the schedulers, and those
 * of a scheduler that died stay known to the others across their own restarts.
 */
function v10(t: Types): string[] {
  return [
    `CREATE TABLE frontier_counts (
      scope ${t.key(KEY_LENGTHS.name)} NOT NULL,
      run_id ${t.key(KEY_LENGTHS.id)} NOT NULL,
      scheduler_id ${t.key(KEY_LENGTHS.id)} NOT NULL,
      total ${t.bigint} NOT NULL,
      done ${t.bigint} NOT NULL,
      failed ${t.bigint} NOT NULL,
      at ${t.bigint} NOT NULL,
      PRIMARY KEY (scope, run_id, scheduler_id)
    )`,
  ];
}

/**
 * 11: a running run says why its scheduler can make no outcome durable now (a store down, a full
 * disk, a broker blocking publishing), and since when; both NULL while it can.
 */
const V11_RUN_STALL: Record<SqlDialect, string[]> = {
  sqlite: [
    `ALTER TABLE runs ADD COLUMN stall_since ${TYPES.sqlite.bigint} NULL`,
    `ALTER TABLE runs ADD COLUMN stall ${TYPES.sqlite.text} NULL`,
  ],
  postgres: [
    `ALTER TABLE runs ADD COLUMN stall_since ${TYPES.postgres.bigint} NULL`,
    `ALTER TABLE runs ADD COLUMN stall ${TYPES.postgres.text} NULL`,
  ],
  // T-SQL has no COLUMN keyword here.
  mssql: [
    `ALTER TABLE runs ADD stall_since ${TYPES.mssql.bigint} NULL`,
    `ALTER TABLE runs ADD stall ${TYPES.mssql.text} NULL`,
  ],
};

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'jobs, runs, logs, results, tokens', statements: perDialect(v1) },
  { version: 2, description: 'agents and their crawler processes', statements: perDialect(v2) },
  { version: 3, description: 'schedules and their claimed fire times', statements: perDialect(v3) },
  { version: 4, description: 'alert rules, alerts, webhooks, deliveries', statements: perDialect(v4) },
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
  { version: 7, description: 'runs name the schedule fire time that made them', statements: V7_SCHEDULED_BY },
  { version: 8, description: 'final failures sent back to their run', statements: V8_LOG_RETRIES },
  { version: 9, description: "the frontier's shared seen-set", statements: perDialect(v9) },
  { version: 10, description: "schedulers' run counters", statements: perDialect(v10) },
  { version: 11, description: 'runs say why their scheduler is stalled', statements: V11_RUN_STALL },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
