import type {
  AlertRepository,
  AlertRuleRepository,
  DeliveryRepository,
  WebhookRepository,
} from './alert-store.js';

/**
 * The SQL store: what the control plane knows (jobs, runs, their failure log, results, API
 * tokens, the fleet of agents and their crawler processes), kept in SQL so that nothing it shows lives only in memory. Adapters: SQLite (embedded
 * default), PostgreSQL, SQL Server; every one passes the same contract suite
 * (test/contract/sql-store.contract.ts).
 *
 * Ids are strings chosen by the caller (UUIDs); times are milliseconds since the epoch. Settings
 * are stored as JSON text and handed back parsed, never interpreted by the store. Lists are paged
 * by an opaque cursor: pass `next` of one page as `after` of the next.
 */
export interface SqlStore {
  /** Apply pending migrations (idempotent; a version table records what ran). Called at open. */
  migrate(): Promise<MigrationReport>;
  readonly jobs: JobRepository;
  readonly runs: RunRepository;
  readonly logs: LogRepository;
  readonly results: ResultRepository;
  readonly extractFailures: ExtractFailureRepository;
  readonly tokens: TokenRepository;
  /** Alerting (shared/ports/alert-store.ts): rules, alerts, webhook endpoints, deliveries. */
  readonly alertRules: AlertRuleRepository;
  readonly alerts: AlertRepository;
  readonly webhooks: WebhookRepository;
  readonly deliveries: DeliveryRepository;
  readonly agents: AgentRepository;
  readonly schedules: ScheduleRepository;
  /** The RabbitMQ frontier's seen-set, shared by the schedulers that split a prefix's hosts. */
  readonly seen: SeenRepository;
  /** True when the database answers a trivial query (for health checks). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface MigrationReport {
  /** Schema version after the call. */
  version: number;
  /** Versions applied by this call (empty when the schema was already current). */
  applied: number[];
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, or null on the last one. */
  next: string | null;
}

export interface PageQuery {
  /** 1..500, default 50. */
  limit?: number;
  after?: string | null;
}

// ---- jobs ----------------------------------------------------------------------------------

export interface JobRow {
  id: string;
  name: string;
  /** The crawl settings (shared/crawl-settings), as validated when saved. */
  settings: unknown;
  createdAt: number;
  updatedAt: number;
}

export interface JobRepository {
  /** Rejects with SQL_CONFLICT when the id or the name is taken. */
  create(job: JobRow): Promise<JobRow>;
  get(id: string): Promise<JobRow | null>;
  /** Oldest first. Deleted jobs are not listed. */
  list(query?: PageQuery): Promise<Page<JobRow>>;
  /** Null when there is no such job. Rejects with SQL_CONFLICT when the new name is taken. */
  update(id: string, patch: { name?: string; settings?: unknown; updatedAt: number }): Promise<JobRow | null>;
  /** False when there is no such job. Its runs stay (they are history). */
  delete(id: string): Promise<boolean>;
}

// ---- runs ----------------------------------------------------------------------------------

export const RUN_STATES = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const FINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled'];

export interface RunCounters {
  /** Pages settled as fetched, not-modified ones included. */
  done: number;
  failed: number;
  /** Of `done`, the pages a recrawl's conditional request found unchanged (304, docs/recrawl.md). */
  notModified: number;
  queued: number;
  inFlight: number;
  pagesPerSecond: number;
}

export interface RunRow {
  id: string;
  jobId: string;
  state: RunState;
  /** The job's settings as they were when the run was created (later edits do not change it). */
  settings: unknown;
  counters: RunCounters;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  /** The scheduler serving the run, and when it last reported; null when none does. */
  schedulerId: string | null;
  heartbeatAt: number | null;
  /** Why a run failed or was cancelled. */
  error: string | null;
  /**
   * The schedule fire time this run was made for (docs/schedules.md); null for a run made through
   * `POST /jobs/{id}/runs` (and for runs written before schema version 7).
   */
  scheduledBy: RunScheduledBy | null;
  /**
   * Why the run's scheduler could make no outcome durable at its last report (a store down, a full
   * disk, a broker blocking publishing), and since when; absent when it could.
   */
  stall?: RunStall;
}

/** A scheduler that can make no outcome durable now: since when (ms since the epoch), and why. */
export interface RunStall {
  since: number;
  reason: string;
}

/** Which schedule made a run, and for which of its fire times (ms since the epoch). */
export interface RunScheduledBy {
  scheduleId: string;
  fireAt: number;
}

export interface RunRepository {
  create(run: RunRow): Promise<RunRow>;
  get(id: string): Promise<RunRow | null>;
  /** Newest first. */
  list(query?: PageQuery & { jobId?: string; states?: readonly RunState[] }): Promise<Page<RunRow>>;
  /**
   * Compare-and-set: moves the run to `to` only if its state is one of `from`, applying `patch`
   * in the same statement. Null when the run does not exist or was in another state (the caller
   * answers 404 or 409 after a get()).
   */
  transition(
    id: string,
    from: readonly RunState[],
    to: RunState,
    patch?: Partial<Pick<RunRow, 'startedAt' | 'endedAt' | 'error' | 'schedulerId' | 'heartbeatAt'>>,
  ): Promise<RunRow | null>;
  /**
   * A scheduler's report: counters, heartbeat and stall (absent: none), for runs it serves. Unknown
   * ids are ignored.
   */
  report(
    reports: readonly {
      id: string;
      schedulerId: string;
      counters: RunCounters;
      at: number;
      stall?: RunStall;
    }[],
  ): Promise<void>;
  /** Runs that ended at or after `at` (any final state), soonest end first, at most `limit` (1..500). */
  endedSince(at: number, limit: number): Promise<RunRow[]>;
  /**
   * Deletes a run that is in one of `states` (the API passes the final ones), and in the same
   * transaction what SQL holds of it: its failure log, results, extract failures and the frontier's
   * rows (a schedule's fire keeps its row, without the run). False when there is no such run in
   * those states.
   */
  delete(id: string, states: readonly RunState[]): Promise<boolean>;
  /** Ids of the runs that ended before `at`, soonest end first, at most `limit` (1..500). */
  endedBefore(at: number, limit: number): Promise<string[]>;
}

// ---- logs: every retry and final failure ---------------------------------------------------

export interface LogRow {
  runId: string;
  url: string;
  /** Error code (shared/error-codes). */
  code: string;
  attempts: number;
  lastError: string;
  /** True for a final failure, false for a retry. */
  final: boolean;
  at: number;
}

/** A logged row as read back, with what became of a retry a person asked for. */
export interface LogEntry extends LogRow {
  id: string;
  /** When a person sent this final failure back to its run (null: never). */
  retriedAt: number | null;
  /** When a scheduler put its URL back into the run's frontier (null: not yet, or never asked). */
  requeuedAt: number | null;
}

export interface LogRepository {
  /** One batch in one transaction (callers batch; see shared/sql/batched-writer.ts). */
  append(rows: readonly LogRow[]): Promise<void>;
  /** Oldest first. `finalOnly`: only final failures. */
  list(runId: string, query?: PageQuery & { finalOnly?: boolean }): Promise<Page<LogEntry>>;
  /** One row by id, or null. */
  get(id: string): Promise<LogEntry | null>;
  /**
   * The run's rows for one URL (as the scheduler logged it: normalised), newest first, at most
   * `limit` (1..500): "why not yet?" for a run no scheduler hosts reads what became of it here.
   */
  ofUrl(runId: string, url: string, limit: number): Promise<LogEntry[]>;
  /**
   * Marks a final failure as sent back to its run at `at`, once: true when this call marked it,
   * false when it was marked before (or is not a final failure). Durable when it resolves: the
   * run's scheduler queues the URL from it (retriesToQueue).
   */
  markRetried(id: string, at: number): Promise<boolean>;
  /** A run's marked retries whose URL is not yet back in its frontier, oldest first, at most `limit`. */
  retriesToQueue(runId: string, limit: number): Promise<LogEntry[]>;
  /** The retry's URL is back in the run's frontier (a second call changes nothing). */
  markRequeued(id: string, at: number): Promise<void>;
  /** How many rows were logged at or after `at`, by run, code and finality (for error rates). */
  countSince(at: number): Promise<LogCount[]>;
}

export interface LogCount {
  runId: string;
  code: string;
  final: boolean;
  count: number;
}

// ---- results: cleaned pages, filled by `ackcrawl extract` (docs/extract.md) -------------------

export interface ResultRow {
  /** The fetch this result was made from (page record `captureId`). */
  captureId: string;
  runId: string;
  jobId: string;
  url: string;
  status: number | null;
  /** Further facts of the extraction (site name, word count, …), as JSON. */
  data: unknown;
  /** When the row was written (ms since the epoch). */
  at: number;
  title: string | null;
  author: string | null;
  /** The page's published time, ms since the epoch. */
  publishedAt: number | null;
  /** ISO 639-1 code (`en`). */
  language: string | null;
  description: string | null;
  canonicalUrl: string | null;
  /** The article's text; null for rows written before schema version 5. */
  mainText: string | null;
  /** When the page was fetched (the record's `fetchedAt`), ms since the epoch. */
  fetchedAt: number | null;
}

export interface ResultRepository {
  /** Idempotent on captureId: a replayed record does not make a second row. */
  upsert(rows: readonly ResultRow[]): Promise<void>;
  list(runId: string, query?: PageQuery): Promise<Page<ResultRow>>;
}

/** A page record the cleaner could not clean, and why (it went on with the next). */
export interface ExtractFailureRow {
  /**
   * Where the record was read, unique per record: `kafka:<topic>:<partition>:<offset>` or
   * `file:<segment>:<line>`. A record read twice (redelivery) keeps one row.
   */
  source: string;
  /** Null when the record was not even a page record (bad JSON). */
  captureId: string | null;
  runId: string | null;
  url: string | null;
  /** Error code (shared/error-codes, `EXTRACT_*`). */
  code: string;
  reason: string;
  at: number;
}

export interface ExtractFailureRepository {
  /** Idempotent on source; one batch in one transaction. */
  record(rows: readonly ExtractFailureRow[]): Promise<void>;
  /** Oldest first. */
  list(query?: PageQuery): Promise<Page<ExtractFailureRow>>;
}

// ---- API tokens ----------------------------------------------------------------------------

export const TOKEN_SCOPES = ['read', 'operate', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface TokenRow {
  id: string;
  name: string;
  scopes: TokenScope[];
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  hash: string;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export interface TokenRepository {
  /** Rejects with SQL_CONFLICT when the id or hash is taken. */
  create(token: TokenRow): Promise<TokenRow>;
  /** Only tokens not revoked. */
  findByHash(hash: string): Promise<TokenRow | null>;
  list(query?: PageQuery): Promise<Page<TokenRow>>;
  /** False when there is no such token or it was already revoked. */
  revoke(id: string, at: number): Promise<boolean>;
  touch(id: string, at: number): Promise<void>;
}

// ---- the frontier's shared seen-set ------------------------------------------------------

/**
 * Which URLs each run accepted, by key (`urlKey`: 32 hex digits), whichever scheduler accepted
 * them. `scope` is the frontier's queue prefix. Keys are claimed once: of two schedulers claiming
 * the same key, at once or not, exactly one is told it won.
 */
export interface SeenRepository {
  /** The keys of `keys` that the run has already. */
  known(scope: string, runId: string, keys: readonly string[]): Promise<Set<string>>;
  /** Adds the keys; returns those this call added (the others were there already). */
  claim(
    scope: string,
    runId: string,
    keys: readonly string[],
    by: { schedulerId: string; at: number },
  ): Promise<Set<string>>;
  /** How many keys the run has. */
  count(scope: string, runId: string): Promise<number>;
  /** Forgets the run's keys and its schedulers' counters (the run is gone); returns how many keys. */
  forget(scope: string, runId: string): Promise<number>;
  /**
   * Writes a scheduler's counters of some runs (its ledger's, at its heartbeat), each replacing
   * what the scheduler wrote of that run before.
   */
  reportCounts(
    scope: string,
    schedulerId: string,
    at: number,
    counts: readonly SchedulerRunCounts[],
  ): Promise<void>;
  /** Every scheduler's counters of every run of the prefix, as each last wrote them. */
  listCounts(scope: string): Promise<(SchedulerRunCounts & { schedulerId: string; at: number })[]>;
}

/** A run's counters in one scheduler's ledger (accepted, done, failed). */
export interface SchedulerRunCounts {
  runId: string;
  total: number;
  done: number;
  failed: number;
}

// ---- the fleet: host agents and their crawler processes ------------------------------------

/**
 * An agent as the master last knew it. `online` and `draining` are what its heartbeats say (a
 * drain asked of it: `draining`); `lost` is set by the master when heartbeats stop coming;
 * `stopped` when the agent said goodbye on a clean shutdown.
 */
export const AGENT_STATES = ['online', 'draining', 'lost', 'stopped'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** A crawler process slot. `crash-loop`: it kept crashing and is no longer restarted. */
export const PROCESS_STATES = ['starting', 'running', 'stopping', 'stopped', 'crash-loop', 'lost'] as const;
export type ProcessState = (typeof PROCESS_STATES)[number];

/** What the master wants of an agent's slots besides their count, kept in SQL. */
export interface SlotOrders {
  /** Slots kept stopped (a stop through the API) until restarted. */
  stopped: number[];
  /** Per slot, how many restarts were asked: a slot whose number grew is restarted once. */
  restarts: Record<string, number>;
}

export interface AgentRow {
  id: string;
  name: string;
  hostname: string;
  /** Its API, as it registered it. */
  url: string;
  state: AgentState;
  /** Host facts of the last heartbeat (CPU, memory, load, disk free), as JSON. */
  facts: unknown;
  lastHeartbeatAt: number;
  registeredAt: number;
  /** The number of crawler processes the master wants there (PUT …/processes). */
  desiredProcesses: number;
  /** A drain was asked: the agent stops its processes and starts none until the count is set again. */
  drain: boolean;
  orders: SlotOrders;
}

export interface ProcessRow {
  agentId: string;
  slot: number;
  pid: number | null;
  state: ProcessState;
  startedAt: number | null;
  restarts: number;
  inFlight: number;
  pagesDone: number;
  errors: number;
  rssBytes: number;
  cpuSeconds: number;
  /** When the agent reported it. */
  reportedAt: number;
}

export interface AgentRegistration {
  id: string;
  name: string;
  hostname: string;
  url: string;
  facts: unknown;
  at: number;
  /** The count a new agent starts with (an agent known already keeps the master's). */
  desiredProcesses: number;
}

export interface AgentRepository {
  /**
   * Creates the agent, or updates a known one (name, hostname, url, facts, heartbeat; `online`, or
   * `draining` while a drain is asked). Its desired count and orders stay the master's.
   */
  register(agent: AgentRegistration): Promise<AgentRow>;
  /**
   * A heartbeat: facts, time, and the processes as they are now (they replace the last report).
   * A lost or stopped agent that reports is `online` (or `draining`) again. Null for an unknown id.
   */
  heartbeat(
    id: string,
    report: { facts: unknown; at: number; processes: readonly Omit<ProcessRow, 'agentId' | 'reportedAt'>[] },
  ): Promise<AgentRow | null>;
  get(id: string): Promise<AgentRow | null>;
  /** Oldest registration first. */
  list(query?: PageQuery): Promise<Page<AgentRow>>;
  /** By slot. */
  processes(agentId: string): Promise<ProcessRow[]>;
  /** Every process in `state` (e.g. `crash-loop`), of every agent: for the alert engine. */
  processesIn(state: ProcessState): Promise<ProcessRow[]>;
  /**
   * What the master wants: a count (which also ends a drain), a drain, slot orders. Null for an
   * unknown id. `orders` is applied with `change`, read and written in one transaction.
   */
  setDesired(
    id: string,
    patch: { desiredProcesses?: number; drain?: boolean; orders?: (orders: SlotOrders) => SlotOrders },
  ): Promise<AgentRow | null>;
  /**
   * Agents `online` or `draining` whose last heartbeat is older than `before` become `lost`, and
   * their processes too. Returns the ids that changed.
   */
  markLost(before: number): Promise<string[]>;
  /** A clean shutdown: the agent and its processes `stopped`. False for an unknown id. */
  markStopped(id: string, at: number): Promise<boolean>;
  /**
   * Removes a `lost` or `stopped` agent and its processes (a host that is gone for good): false
   * when there is none, or it is online or draining (it would only register again).
   */
  forget(id: string): Promise<boolean>;
}

// ---- schedules: cron schedules of jobs and the fire times they claimed ---------------------

export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
/** What a fire time does while a run of the job is not final (docs/schedules.md). */
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const MISFIRE_POLICIES = ['run-once', 'skip'] as const;
/** What fire times missed while no master was up come to: one run for all of them, or none. */
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

export interface ScheduleRow {
  id: string;
  /** One schedule per job. */
  jobId: string;
  /** A cron expression (5 fields, or 6 with seconds first), as node-cron reads it. */
  expression: string;
  /** An IANA time zone (`Europe/Paris`, `UTC`). */
  timeZone: string;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  enabled: boolean;
  /** The fire time waiting behind an active run (overlap `queue`), or null. */
  waitingFireAt: number | null;
  createdAt: number;
  /** Changed by every edit and by pause/resume: fire times before it are never missed ones. */
  updatedAt: number;
}

export const FIRE_OUTCOMES = ['claimed', 'started', 'waiting', 'skipped', 'missed'] as const;
/**
 * What became of a claimed fire time: `claimed` (being decided), `started` (a run made),
 * `waiting` (queued behind an active run), `skipped` (overlap), `missed` (misfire policy skip).
 */
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];

export interface FireRow {
  scheduleId: string;
  /** The fire time, ms since the epoch. Unique per schedule: claiming it twice fails. */
  fireAt: number;
  claimedAt: number;
  /** The master process that claimed it. */
  claimedBy: string;
  outcome: FireOutcome;
  /**
   * The id the fire time's run gets, chosen when it is claimed, before the run is made: a master
   * that takes over a claim left `claimed` (its claimer died) finds out from it whether the run was
   * made already, so a fire time never makes two runs. Kept once `started`; null once the fire
   * time came to no run (`waiting`, `skipped`, `missed`), and in claims made before the id was
   * chosen up front.
   */
  runId: string | null;
  /** Fire times before this one that were missed and folded into it (misfire). */
  missed: number;
}

export interface ScheduleRepository {
  /**
   * Sets the job's schedule: creates it (with `schedule.id`) or replaces the expression, zone,
   * policies and enabled flag of the one there (keeping its id and createdAt).
   */
  put(schedule: ScheduleRow): Promise<ScheduleRow>;
  get(id: string): Promise<ScheduleRow | null>;
  getByJob(jobId: string): Promise<ScheduleRow | null>;
  /** Oldest first. */
  list(query?: PageQuery): Promise<Page<ScheduleRow>>;
  /** Null when the job has no schedule. */
  setEnabled(jobId: string, enabled: boolean, at: number): Promise<ScheduleRow | null>;
  /** False when the job had no schedule. Its claimed fire times go with it. */
  deleteByJob(jobId: string): Promise<boolean>;
  /**
   * Insert-if-absent of (scheduleId, fireAt): true for the one caller that claimed it, false for
   * every other (another master claimed it first).
   */
  claimFire(fire: FireRow): Promise<boolean>;
  /**
   * Claims still `claimed` whose claim is older than `claimedBefore` (their claimer presumably died
   * before settling them), of fire times at or after `since`: oldest fire time first, at most
   * `limit` (1..500).
   */
  staleClaims(scheduleId: string, claimedBefore: number, since: number, limit: number): Promise<FireRow[]>;
  /**
   * Compare-and-set take-over of a stale claim: it becomes this master's (`claimedAt`,
   * `claimedBy`) only if it is still `claimed` and its claim older than `claimedBefore`. True for
   * the one caller whose update landed, false for every other (and for a claim settled meanwhile).
   */
  reclaimFire(
    scheduleId: string,
    fireAt: number,
    claimedBefore: number,
    claimedAt: number,
    claimedBy: string,
  ): Promise<boolean>;
  /** Records what the claimer did with its fire time. */
  settleFire(scheduleId: string, fireAt: number, outcome: FireOutcome, runId: string | null): Promise<void>;
  /** The latest claimed fire time of the schedule, or null. */
  lastFire(scheduleId: string): Promise<FireRow | null>;
  /** Newest first. */
  listFires(scheduleId: string, query?: PageQuery): Promise<Page<FireRow>>;
  /** Compare-and-set of the waiting fire time: from `expected` (null: none waits) to `next`. */
  swapWaiting(scheduleId: string, expected: number | null, next: number | null): Promise<boolean>;
}
