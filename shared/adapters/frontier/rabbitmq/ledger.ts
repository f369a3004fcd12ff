import Database from 'better-sqlite3';
import { StorageError } from '../../../errors.js';
import type { RunState } from '../../../ports/frontier.js';
import type { NewTask } from '../../../protocol/task.js';
import { toFrontierError } from '../sqlite-errors.js';

/** A URL's state in the ledger. Rows are never deleted: the table is each run's seen-set. */
export const LedgerState = { accepted: 0, done: 1, failed: 2 } as const;
export type LedgerStateValue = (typeof LedgerState)[keyof typeof LedgerState];

const RUN_STATE_VALUES: Record<RunState, number> = { active: 0, paused: 1, cancelled: 2 };
const RUN_STATES: Record<number, RunState> = { 0: 'active', 1: 'paused', 2: 'cancelled' };

export interface LedgerEntry {
  state: LedgerStateValue;
  /** The highest attempt published for the URL; an older message is a leftover duplicate. */
  attempt: number;
}

export interface LedgerCounts {
  total: number;
  done: number;
  failed: number;
}

export interface LedgerRun extends LedgerCounts {
  runId: string;
  state: RunState;
  /** A cancelled or retired run whose queues are deleted. */
  purged: boolean;
  /**
   * A run that is over, its end recorded where the fleet reads it (Frontier.retireRun): its queues
   * are neither declared, consumed nor counted any more. Its counters stay.
   */
  retired: boolean;
}

export interface RunUrl {
  runId: string;
  url: string;
}

/** What one settle or push records, in one transaction. */
export interface LedgerChanges {
  accepted?: readonly NewTask[];
  /**
   * URLs another scheduler of the prefix accepted (the shared seen-set said so): kept in the
   * seen-set here, so they are not asked about again, but not counted in `total`, which is theirs.
   */
  seenElsewhere?: readonly NewTask[];
  done?: readonly RunUrl[];
  failed?: readonly RunUrl[];
  retried?: readonly (RunUrl & { attempt: number })[];
  /** Failed URLs put back into their run (Frontier.requeue): accepted again, at attempt 1. */
  requeued?: readonly RunUrl[];
  checkpoint?: string;
}

const LEDGER_KIND = 'ackcrawl-rabbitmq-ledger';
/** 2: runs (per-run seen-set and counters, run control). A version-1 ledger is refused. */
const LEDGER_VERSION = '2';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS urls (
    run_id  TEXT    NOT NULL,
    url     TEXT    NOT NULL,
    state   INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    PRIMARY KEY (run_id, url)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT    PRIMARY KEY,
    state  INTEGER NOT NULL,
    total  INTEGER NOT NULL,
    done   INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    purged INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/** Added after version 2 (a ledger written before has no run retired): added where missing. */
const RETIRED_COLUMN = 'ALTER TABLE runs ADD COLUMN retired INTEGER NOT NULL DEFAULT 0';

/**
 * The RabbitMQ frontier's local record, one SQLite file: every URL each run accepted (the seen-sets,
 * on disk, so memory stays flat) with its state, until the run is over and its queues are gone
 * (then they are swept, see run-sweeper.ts), each run's counters (behind stats() and maxTotal)
 * and control state, and the sink checkpoint. The broker holds the work; the ledger holds what the
 * work was. Writes are synchronous=FULL: a URL marked done here is acked in the broker right
 * after, so the mark must not be lost (a lost mark would leave a URL pending with no message to
 * finish it). Runs are few, so they are all kept in memory as well.
 */
export class Ledger {
  private readonly db: Database.Database;
  private readonly stmts: ReturnType<typeof prepare>;
  private readonly writeTx: Database.Transaction<
    (changes: LedgerChanges, before: Map<string, LedgerRun | undefined>) => void
  >;
  private readonly runMap = new Map<string, LedgerRun>();
  /** The runs of runMap not retired: what the frontier iterates, so ended runs cost it nothing. */
  private readonly live = new Map<string, LedgerRun>();
  private lastCheckpoint: string | null;
  /** Made with auto_vacuum = INCREMENTAL: free pages can go back to the file system. */
  private readonly incremental: boolean;

  /**
   * `foreignOutcomes: 'uncounted'` when hosts are split among schedulers: an outcome of a URL this
   * ledger never accepted was accepted (and counted in `total`) by another scheduler, so it counts
   * as done or failed here but not again in `total`; the run's counters are the sum over the
   * schedulers' ledgers.
   */
  constructor(
    readonly path: string,
    cacheSizeMb = 16,
    private readonly foreignOutcomes: 'counted' | 'uncounted' = 'counted',
  ) {
    try {
      this.db = new Database(path, { timeout: 5_000 });
    } catch (err) {
      throw toFrontierError(err, 'open ledger', path);
    }
    try {
      // Only an empty file takes it (a ledger made before keeps NONE: it reuses its free pages).
      const empty = this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM sqlite_master').get();
      if (empty?.n === 0) this.db.pragma('auto_vacuum = INCREMENTAL');
      this.incremental = this.db.pragma('auto_vacuum', { simple: true }) === 2;
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma(`cache_size = ${-Math.round(cacheSizeMb * 1024)}`);
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID',
      );
      this.checkKind();
      this.db.exec(SCHEMA);
      const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(runs)').all();
      if (!columns.some((c) => c.name === 'retired')) this.db.exec(RETIRED_COLUMN);
      this.stmts = prepare(this.db);
      for (const row of this.stmts.runs.all()) {
        this.put({
          runId: row.run_id,
          state: RUN_STATES[row.state] ?? 'active',
          total: row.total,
          done: row.done,
          failed: row.failed,
          purged: row.purged !== 0,
          retired: row.retired !== 0,
        });
      }
      this.lastCheckpoint = this.stmts.getMeta.get('checkpoint')?.value ?? null;
      this.writeTx = this.db.transaction(
        (changes: LedgerChanges, before: Map<string, LedgerRun | undefined>) => this.apply(changes, before),
      );
    } catch (err) {
      this.db.close();
      throw toFrontierError(err, 'open ledger', path);
    }
  }

  /** Counters of one run, or of every run together. */
  counts(runId?: string): LedgerCounts {
    if (runId !== undefined) {
      const run = this.runMap.get(runId);
      return { total: run?.total ?? 0, done: run?.done ?? 0, failed: run?.failed ?? 0 };
    }
    const all = { total: 0, done: 0, failed: 0 };
    for (const run of this.runMap.values()) {
      all.total += run.total;
      all.done += run.done;
      all.failed += run.failed;
    }
    return all;
  }

  run(runId: string): LedgerRun | undefined {
    const run = this.runMap.get(runId);
    return run === undefined ? undefined : { ...run };
  }

  /** Every run not retired (see LedgerRun.retired), copied. */
  runs(): LedgerRun[] {
    return [...this.live.values()].map((run) => ({ ...run }));
  }

  /** Whether the run is retired (see LedgerRun.retired); no copy, for the hot paths. */
  isRetired(runId: string): boolean {
    return this.runMap.get(runId)?.retired === true;
  }

  /** The retired runs whose queues are not deleted yet. */
  retiredUndeleted(): LedgerRun[] {
    return [...this.runMap.values()].filter((run) => run.retired && !run.purged).map((run) => ({ ...run }));
  }

  /**
   * The runs over whose URL rows may go, and that still have some: retired, with their queues
   * deleted (nothing of them can be delivered, and their discoveries are not taken). A cancelled
   * run keeps them until it is retired too (its end recorded in SQL); the sweeper then waits for
   * outcomes of its leases still out, which are applied to them.
   */
  runsToSweep(): string[] {
    try {
      return [...this.runMap.values()]
        .filter((run) => sweepable(run) && this.stmts.anyUrl.get(run.runId) !== undefined)
        .map((run) => run.runId);
    } catch (err) {
      throw toFrontierError(err, 'ledger lookup', this.path);
    }
  }

  /**
   * Deletes up to `limit` URL rows of a run {@link runsToSweep} would list, in one durable
   * write; how many it deleted (fewer than `limit`: none left). A run still served keeps its rows:
   * 0 for it. Its counters stay, so stats(runId) still gives them.
   */
  sweepRows(runId: string, limit: number): number {
    const run = this.runMap.get(runId);
    if (run === undefined || !sweepable(run)) return 0;
    try {
      return this.stmts.sweepUrls.run(runId, runId, limit).changes;
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
  }

  /**
   * Gives up to `maxPages` free pages (left by swept rows) back to the file system, in one durable
   * write; how many it gave. The file shrinks at the next checkpoint of the write-ahead log. A
   * ledger made before ackcrawl set auto_vacuum gives none: it keeps its size and reuses them.
   */
  releaseFreePages(maxPages: number): number {
    if (!this.incremental) return 0;
    try {
      const before = this.freePages();
      this.db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`);
      return before - this.freePages();
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
  }

  /** Pages of the file that hold nothing (freed by swept rows, not given back yet). */
  freePages(): number {
    return Number(this.db.pragma('freelist_count', { simple: true }));
  }

  stateOf(runId: string): RunState | undefined {
    return this.runMap.get(runId)?.state;
  }

  get checkpoint(): string | null {
    return this.lastCheckpoint;
  }

  lookup(runId: string, url: string): LedgerEntry | undefined {
    try {
      return this.stmts.lookup.get(runId, url);
    } catch (err) {
      throw toFrontierError(err, 'ledger lookup', this.path);
    }
  }

  /**
   * The tasks to accept: URLs neither in their run's seen-set nor earlier in `tasks`, at most
   * `roomOf(runId)` per run, none of a cancelled or retired run; `capped` when a room kept out a
   * URL its run does not have. Nothing is recorded: the caller publishes them first and records
   * them after the confirm.
   */
  unseen(
    tasks: readonly NewTask[],
    roomOf: (runId: string) => number,
  ): { fresh: NewTask[]; capped: boolean } {
    const fresh: NewTask[] = [];
    const inCall = new Set<string>();
    const taken = new Map<string, number>();
    let capped = false;
    try {
      for (const task of tasks) {
        const key = `${task.runId}\n${task.url}`;
        if (inCall.has(key) || this.stateOf(task.runId) === 'cancelled' || this.isRetired(task.runId))
          continue;
        if (this.stmts.lookup.get(task.runId, task.url) !== undefined) continue;
        const n = taken.get(task.runId) ?? 0;
        if (n >= roomOf(task.runId)) {
          capped = true;
          continue;
        }
        taken.set(task.runId, n + 1);
        inCall.add(key);
        fresh.push(task);
      }
    } catch (err) {
      throw toFrontierError(err, 'ledger lookup', this.path);
    }
    return { fresh, capped };
  }

  /**
   * Records a push or a settlement in one durable transaction; counters follow only on commit (the
   * runs the write touches are copied first, and put back if it rolls back).
   */
  record(changes: LedgerChanges): void {
    const before = new Map<string, LedgerRun | undefined>();
    try {
      this.writeTx.immediate(changes, before);
    } catch (err) {
      this.restore(before);
      throw toFrontierError(err, 'ledger write', this.path);
    }
    if (changes.checkpoint !== undefined) this.lastCheckpoint = changes.checkpoint;
  }

  /** Records a run (active) before its first message is published, so a restart knows its queues. */
  ensureRuns(runIds: Iterable<string>): void {
    const missing = [...new Set(runIds)].filter((runId) => !this.runMap.has(runId));
    if (missing.length === 0) return;
    try {
      this.db
        .transaction(() => {
          for (const runId of missing) this.stmts.addRun.run(runId);
        })
        .immediate();
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
    for (const runId of missing) {
      this.put(newRun(runId, 'active'));
    }
  }

  /** Durably sets a run's control state (creating the run if needed). */
  setState(runId: string, state: RunState): void {
    try {
      this.stmts.addRun.run(runId);
      this.stmts.setState.run(RUN_STATE_VALUES[state], runId);
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
    const run = this.runMap.get(runId) ?? newRun(runId, state);
    run.state = state;
    this.put(run);
  }

  /** A run that is over stops being served from the broker (see LedgerRun.retired). */
  markRetired(runId: string): void {
    try {
      this.stmts.setRetired.run(runId);
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
    const run = this.runMap.get(runId);
    if (run !== undefined) run.retired = true;
    this.live.delete(runId);
  }

  /** A cancelled or retired run's queues are deleted. */
  markPurged(runId: string): void {
    try {
      this.stmts.setPurged.run(runId);
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
    const run = this.runMap.get(runId);
    if (run !== undefined) run.purged = true;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private apply(changes: LedgerChanges, before: Map<string, LedgerRun | undefined>): void {
    const s = this.stmts;
    const touched = new Set<LedgerRun>();
    const runOf = (runId: string): LedgerRun => {
      let run = this.runMap.get(runId);
      if (!before.has(runId)) before.set(runId, run === undefined ? undefined : { ...run });
      if (run === undefined) {
        s.addRun.run(runId);
        run = newRun(runId, 'active');
        this.put(run);
      }
      touched.add(run);
      return run;
    };
    for (const task of changes.accepted ?? []) {
      runOf(task.runId).total += s.insert.run(task.runId, task.url, LedgerState.accepted, 1).changes;
    }
    for (const task of changes.seenElsewhere ?? []) {
      runOf(task.runId);
      s.insert.run(task.runId, task.url, LedgerState.accepted, 1);
    }
    for (const { runId, url, attempt } of changes.retried ?? []) {
      const row = s.lookup.get(runId, url);
      if (row === undefined) {
        s.insert.run(runId, url, LedgerState.accepted, attempt);
        runOf(runId).total += 1;
      } else if (row.state === LedgerState.accepted && row.attempt < attempt) {
        s.setAttempt.run(attempt, runId, url);
      }
    }
    const finish = ({ runId, url }: RunUrl, state: LedgerStateValue, counter: 'done' | 'failed'): void => {
      const row = s.lookup.get(runId, url);
      const run = runOf(runId);
      // A message whose push crashed between the confirm and the ledger is accepted on its outcome.
      if (row === undefined) {
        s.insert.run(runId, url, state, 1);
        if (this.foreignOutcomes === 'counted') run.total += 1;
        run[counter] += 1;
      } else if (row.state === LedgerState.accepted) {
        s.setUrlState.run(state, runId, url);
        run[counter] += 1;
      }
    };
    for (const { runId, url } of changes.requeued ?? []) {
      const row = s.lookup.get(runId, url);
      if (row?.state !== LedgerState.failed) continue;
      s.setUrlState.run(LedgerState.accepted, runId, url);
      s.setAttempt.run(1, runId, url);
      runOf(runId).failed -= 1;
    }
    for (const item of changes.done ?? []) finish(item, LedgerState.done, 'done');
    for (const item of changes.failed ?? []) finish(item, LedgerState.failed, 'failed');
    for (const run of touched) s.setCounts.run(run.total, run.done, run.failed, run.runId);
    if (changes.checkpoint !== undefined) s.setMeta.run('checkpoint', changes.checkpoint);
  }

  /** After a rolled-back write: the runs it touched as they were (a run it added, gone). */
  private restore(before: Map<string, LedgerRun | undefined>): void {
    for (const [id, run] of before) {
      if (run !== undefined) this.put(run);
      else {
        this.runMap.delete(id);
        this.live.delete(id);
      }
    }
  }

  private put(run: LedgerRun): void {
    this.runMap.set(run.runId, run);
    if (run.retired) this.live.delete(run.runId);
    else this.live.set(run.runId, run);
  }

  /** A file of another kind (the SQLite frontier's, say), an old or a newer ledger is refused, not mixed. */
  private checkKind(): void {
    const get = this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    const kind = get.get('kind')?.value;
    const version = get.get('ledger_version')?.value;
    const hasOther = get.get('schema_version') !== undefined;
    if (kind === undefined && !hasOther) {
      const set = this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      this.db.transaction(() => {
        set.run('kind', LEDGER_KIND);
        set.run('ledger_version', LEDGER_VERSION);
      })();
      return;
    }
    if (kind === LEDGER_KIND && version === '1') {
      throw new StorageError(
        'FRONTIER_OLD_LAYOUT',
        `${this.path} is a RabbitMQ frontier ledger of the layout before runs (version 1): finish that crawl with the ackcrawl version that wrote it, or remove the file together with the crawl's old queues to start over`,
        { details: { path: this.path } },
      );
    }
    if (kind !== LEDGER_KIND || version !== LEDGER_VERSION) {
      throw new StorageError(
        'FRONTIER_SCHEMA',
        `${this.path} is not a RabbitMQ frontier ledger this build reads (kind ${kind ?? '?'}, version ${version ?? '?'})`,
        { details: { path: this.path } },
      );
    }
  }
}

/** Retired, and its queues deleted: nothing of it can be delivered, and it takes no discoveries. */
function sweepable(run: LedgerRun): boolean {
  return run.purged && run.retired;
}

/** A run the ledger has just met: nothing counted, neither purged nor retired. */
function newRun(runId: string, state: RunState): LedgerRun {
  return { runId, state, total: 0, done: 0, failed: 0, purged: false, retired: false };
}

function prepare(db: Database.Database) {
  return {
    lookup: db.prepare<[string, string], LedgerEntry>(
      'SELECT state, attempt FROM urls WHERE run_id = ? AND url = ?',
    ),
    insert: db.prepare<[string, string, number, number]>(
      'INSERT OR IGNORE INTO urls (run_id, url, state, attempt) VALUES (?, ?, ?, ?)',
    ),
    anyUrl: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM urls WHERE run_id = ? LIMIT 1'),
    sweepUrls: db.prepare<[string, string, number]>(
      'DELETE FROM urls WHERE run_id = ? AND url IN (SELECT url FROM urls WHERE run_id = ? LIMIT ?)',
    ),
    setUrlState: db.prepare<[number, string, string]>(
      'UPDATE urls SET state = ? WHERE run_id = ? AND url = ?',
    ),
    setAttempt: db.prepare<[number, string, string]>(
      'UPDATE urls SET attempt = ? WHERE run_id = ? AND url = ?',
    ),
    runs: db.prepare<
      [],
      {
        run_id: string;
        state: number;
        total: number;
        done: number;
        failed: number;
        purged: number;
        retired: number;
      }
    >('SELECT run_id, state, total, done, failed, purged, retired FROM runs'),
    addRun: db.prepare<[string]>(
      'INSERT OR IGNORE INTO runs (run_id, state, total, done, failed, purged) VALUES (?, 0, 0, 0, 0, 0)',
    ),
    setState: db.prepare<[number, string]>('UPDATE runs SET state = ? WHERE run_id = ?'),
    setPurged: db.prepare<[string]>('UPDATE runs SET purged = 1 WHERE run_id = ?'),
    setRetired: db.prepare<[string]>('UPDATE runs SET retired = 1 WHERE run_id = ?'),
    setCounts: db.prepare<[number, number, number, string]>(
      'UPDATE runs SET total = ?, done = ?, failed = ? WHERE run_id = ?',
    ),
    getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare<[string, string]>('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
  };
}
