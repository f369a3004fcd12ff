import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Logger } from '../../logger.js';
import { RunSweeper } from './run-sweeper.js';
import type { Lease, NewTask } from '../../protocol/task.js';
import type {
  Frontier,
  FrontierStats,
  LeaseOptions,
  TaskView,
  PushOptions,
  RunControl,
  RunLimit,
  RunState,
  Settlement,
  SettleResult,
} from '../../ports/frontier.js';
import { InvalidInputError } from '../../errors.js';
import { clampLevel, PRIORITY_LEVELS } from '../../protocol/task-priority.js';
import { LevelPicker, pickByLevel } from './level-picker.js';
import { Delta, RunCounts, totalOf, zeroCounts, type CountKey, type Counts } from './run-counts.js';
import { runCancelledError } from './run-errors.js';
import { closedError, toFrontierError } from './sqlite-errors.js';
import { openDatabase, RunStateValue, State, type SqliteDurability } from './sqlite-schema.js';
import { prepareStatements, type ChangedRow, type Statements, type TaskRow } from './sqlite-statements.js';
import { assertLeaseMs, assertNewTasks, assertRunId, assertSettlement, runCap } from './task-input.js';

export interface SqliteFrontierOptions {
  /** The frontier file; created with its schema when missing. */
  path: string;
  /** Default lease duration for lease(). 60 s unless given. */
  leaseMs?: number;
  /** Milliseconds since the epoch; injectable for tests. Date.now unless given. */
  clock?: () => number;
  /**
   * SQLite page cache, a fixed amount of memory. 8 MiB unless given: pages beyond it come from the
   * OS's file cache. At 200,000 pages the scheduler peaked at 171 MB with 32 MiB (and a seen-cache
   * of 200,000 URLs) and at 124 MB with 8 MiB (and 50,000), no slower (npm run bench -- --pages
   * 200000 --only ackcrawl: 1,119 and 1,226 pages/s).
   */
  cacheSizeMb?: number;
  /** See SqliteDurability; `full` unless a caller can replay lost commits. */
  durability?: SqliteDurability;
  /**
   * The scheduler that owns the file deletes retired runs' tasks in the background (run-sweeper.ts),
   * logging there; without it (a CLI reading the file) nothing is deleted.
   */
  sweepRetired?: Logger;
}

export interface SqliteFrontier extends Frontier {
  readonly path: string;
  /**
   * Puts every leased task back, ready at once, attempt unchanged; returns how many. For the
   * embedded scheduler at start: it is the only consumer of its file, so every lease left in it
   * belongs to a run that is gone. Never call it while another process is leasing from the file.
   */
  releaseAllLeases(): number;
  retireRun(runId: string): Promise<void>;
}

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

const STATE_KEYS: Record<number, CountKey> = {
  [State.queued]: 'queued',
  [State.leased]: 'leased',
  [State.done]: 'done',
  [State.failed]: 'failed',
  [State.cancelled]: 'cancelled',
};

const RUN_STATES: Record<number, RunState> = {
  [RunStateValue.active]: 'active',
  [RunStateValue.paused]: 'paused',
  [RunStateValue.cancelled]: 'cancelled',
};

/**
 * Opens the SQLite frontier at `options.path`. One process should own a file: the per-run, per-state
 * counters behind stats() and maxTotal, and the set of paused runs, live in this object. A task's `attempt` starts at 1 and
 * grows only with a retry settlement; an expired or released lease puts the task back with the
 * same attempt. Times (available_at, lease expiry) come from `clock`.
 */
export function openSqliteFrontier(options: SqliteFrontierOptions): SqliteFrontier {
  const leaseMs = options.leaseMs ?? 60_000;
  assertLeaseMs(leaseMs);
  const cacheSizeMb = options.cacheSizeMb ?? 8;
  if (!Number.isFinite(cacheSizeMb) || cacheSizeMb <= 0) {
    throw new InvalidInputError(
      'FRONTIER_BAD_CACHE_SIZE',
      `cacheSizeMb must be a positive number, got ${cacheSizeMb}`,
    );
  }
  let db: Database.Database;
  try {
    db = openDatabase(options.path, cacheSizeMb, options.durability);
  } catch (err) {
    throw toFrontierError(err, 'open', options.path);
  }
  try {
    return new SqliteFrontierImpl(db, options.path, leaseMs, options.clock ?? Date.now, options.sweepRetired);
  } catch (err) {
    db.close();
    throw toFrontierError(err, 'open', options.path);
  }
}

class SqliteFrontierImpl implements SqliteFrontier {
  private readonly stmts: Statements;
  private readonly transaction: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly counts = new RunCounts();
  private readonly runStates = new Map<string, RunState>();
  /** Runs over, their end recorded in SQL (retireRun): out of runs() and stats(), their tasks deleted. */
  private readonly retired = new Set<string>();
  private readonly sweeper: RunSweeper | null;
  private readonly picker = new LevelPicker();
  private lastCheckpoint: string | null;
  /** Lease ids are `<random per open>.<counter>`, so no id repeats, across restarts included. */
  private readonly leaseToken = randomBytes(6).toString('base64url');
  private leaseSeq = 0;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
    private readonly leaseMs: number,
    private readonly clock: () => number,
    sweepLogger: Logger | undefined,
  ) {
    this.stmts = prepareStatements(db);
    this.transaction = db.transaction((fn: () => unknown) => fn());
    for (const { run_id, state, n } of this.stmts.countByRunAndState.all()) {
      const key = STATE_KEYS[state];
      if (key !== undefined) this.counts.set(run_id, key, n);
    }
    for (const { run_id, state, retired, final_counts } of this.stmts.runs.all()) {
      this.runStates.set(run_id, RUN_STATES[state] ?? 'active');
      if (retired === 0) continue;
      this.retired.add(run_id);
      // Its tasks are (being) deleted: its counters are those kept when it was last swept.
      const kept = parseCounts(final_counts);
      if (kept !== null) this.counts.replace(run_id, kept);
    }
    this.sweeper =
      sweepLogger === undefined
        ? null
        : new RunSweeper({
            rows: { sweepRows: (runId, limit) => this.sweepTasks(runId, limit), releaseFreePages: () => 0 },
            holds: (runId) => this.counts.of(runId).leased > 0,
            logger: sweepLogger,
          });
    for (const runId of this.retired) {
      if (this.stmts.anyTaskOfRun.get(runId) !== undefined) this.sweeper?.add(runId);
    }
    this.lastCheckpoint = this.stmts.getMeta.get('checkpoint')?.value ?? null;
  }

  async push(tasks: readonly NewTask[], options: PushOptions = {}): Promise<NewTask[]> {
    assertNewTasks(tasks);
    return this.write('push', (now, delta) => this.insert(tasks, options.maxTotal, now, delta).accepted);
  }

  async requeue(runId: string, url: string): Promise<boolean> {
    assertRunId(runId);
    if (this.runStates.get(runId) === 'cancelled') return false;
    return this.write('requeue', (now, delta) => {
      const { changes } = this.stmts.requeueFailed.run(now, now, runId, url);
      if (changes > 0) delta.move(runId, 'failed', 'queued');
      return changes > 0;
    });
  }

  async inspect(runId: string, url: string): Promise<TaskView | null> {
    this.assertOpen();
    assertRunId(runId);
    const row = this.stmts.inspect.get(runId, url);
    if (row === undefined) return null;
    const now = this.clock();
    const state =
      row.state === State.done
        ? 'done'
        : row.state === State.failed
          ? 'failed'
          : row.state === State.cancelled
            ? 'cancelled'
            : row.state === State.leased
              ? 'leased'
              : row.available_at > now
                ? 'delayed'
                : 'queued';
    return {
      runId,
      url: row.url,
      state,
      attempt: row.attempt,
      lastError: row.last_error,
      availableAt: state === 'delayed' ? row.available_at : null,
      depth: row.depth,
      parentUrl: row.parent_url,
    };
  }

  /**
   * Reads up to `max` ready tasks of each level (one indexed walk per level), then takes from them
   * in the level picker's order: higher levels first, every level its share.
   */
  async lease(max: number, options: LeaseOptions = {}): Promise<Lease[]> {
    if (!(max >= 1)) return [];
    const limit = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
    const leaseMs = options.leaseMs ?? this.leaseMs;
    assertLeaseMs(leaseMs);
    const exclude = JSON.stringify(options.excludeHosts ?? []);
    const paused = JSON.stringify(this.runsIn('paused'));
    return this.write('lease', (now, delta) => {
      this.requeueExpired(now, delta);
      const candidates: TaskRow[][] = [];
      for (let level = 0; level < PRIORITY_LEVELS; level++) {
        candidates.push(this.stmts.selectReady.all(level, now, exclude, paused, limit));
      }
      return pickByLevel(this.picker, candidates, limit).map((row) => {
        const leaseId = `${this.leaseToken}.${(this.leaseSeq += 1).toString(36)}`;
        this.stmts.markLeased.run(leaseId, now + leaseMs, now, row.id);
        delta.move(row.run_id, 'queued', 'leased');
        return toLease(row, leaseId);
      });
    });
  }

  async settle(batch: Settlement): Promise<SettleResult> {
    assertSettlement(batch);
    const result = this.write('settle', (now, delta) => {
      let applied = 0;
      let accepted = 0;
      let capped = false;
      const discover = (runId: string, discovered: readonly NewTask[] | undefined): void => {
        if (discovered === undefined || this.runStates.get(runId) === 'cancelled') return;
        const inserted = this.insert(discovered, batch.maxTotal, now, delta);
        accepted += inserted.accepted.length;
        capped ||= inserted.capped;
      };
      for (const { lease, discovered } of batch.acks) {
        const row = this.apply(lease, (id, leaseId) => this.stmts.ack.get(now, id, leaseId));
        if (row === undefined) continue;
        moveTo(delta, row, 'leased');
        applied += 1;
        // A stale ack pushes nothing: the lease that replaced it will report its own links.
        discover(row.run_id, discovered);
      }
      for (const { lease, delayMs, error } of batch.retries) {
        const availableAt = now + Math.max(0, delayMs);
        const row = this.apply(lease, (id, leaseId) =>
          this.stmts.retry.get(availableAt, error, now, id, leaseId),
        );
        if (row === undefined) continue;
        moveTo(delta, row, 'leased');
        applied += 1;
      }
      for (const { lease, error, discovered } of batch.failures) {
        const row = this.apply(lease, (id, leaseId) => this.stmts.fail.get(error, now, id, leaseId));
        if (row === undefined) continue;
        moveTo(delta, row, 'leased');
        applied += 1;
        discover(row.run_id, discovered);
      }
      if (batch.checkpoint !== undefined) this.stmts.setMeta.run('checkpoint', batch.checkpoint);
      return capped ? { applied, accepted, capped } : { applied, accepted };
    });
    if (batch.checkpoint !== undefined) this.lastCheckpoint = batch.checkpoint;
    return result;
  }

  async release(leases: readonly LeaseRef[]): Promise<void> {
    this.write('release', (now, delta) => {
      for (const lease of leases) {
        const row = this.apply(lease, (id, leaseId) => this.stmts.release.get(now, now, id, leaseId));
        if (row !== undefined) moveTo(delta, row, 'leased');
      }
    });
  }

  /** Each matching lease now lasts until now + leaseMs, or longer if it already did. */
  async renew(leases: readonly LeaseRef[], leaseMs: number): Promise<void> {
    assertLeaseMs(leaseMs);
    this.write('renew', (now) => {
      for (const lease of leases) {
        const id = parseTaskId(lease.taskId);
        if (id !== null && typeof lease.leaseId === 'string') {
          this.stmts.renew.run(now + leaseMs, now, id, lease.leaseId);
        }
      }
    });
  }

  releaseAllLeases(): number {
    return this.write('releaseAllLeases', (now, delta) => {
      const rows = this.stmts.releaseAll.all(now, now);
      for (const row of rows) moveTo(delta, row, 'leased');
      return rows.length;
    });
  }

  async pauseRun(runId: string): Promise<void> {
    this.setRunState(runId, 'paused');
  }

  async resumeRun(runId: string): Promise<void> {
    this.setRunState(runId, 'active');
  }

  /** Marks the run cancelled and its queued tasks (delayed ones included) cancelled, in one step. */
  async cancelRun(runId: string): Promise<number> {
    assertRunId(runId);
    if (this.runStates.get(runId) === 'cancelled') {
      this.assertOpen();
      return 0;
    }
    const removed = this.write('cancelRun', (now, delta) => {
      this.stmts.setRunState.run(runId, RunStateValue.cancelled, now);
      const n = this.stmts.cancelQueued.run(now, runId).changes;
      delta.move(runId, 'queued', 'cancelled', n);
      return n;
    });
    this.runStates.set(runId, 'cancelled');
    return removed;
  }

  async runs(): Promise<RunControl[]> {
    this.assertOpen();
    const ids = new Set([...this.runStates.keys(), ...this.counts.runIds()]);
    for (const runId of this.retired) ids.delete(runId);
    return [...ids].sort().map((runId) => ({ runId, state: this.runStates.get(runId) ?? 'active' }));
  }

  /**
   * The run is over, its end recorded in SQL: it leaves runs() and the sum of stats(), takes no
   * more tasks, and its tasks are deleted in the background once none is leased (with
   * `sweepRetired`), its counters kept for stats(runId). Durable, idempotent; an unknown run is
   * left as it is.
   */
  async retireRun(runId: string): Promise<void> {
    assertRunId(runId);
    this.assertOpen();
    if (this.retired.has(runId) || (!this.runStates.has(runId) && !this.counts.has(runId))) return;
    this.write('retireRun', (now) => {
      this.stmts.addRun.run(runId, now);
      this.stmts.retire.run(JSON.stringify(this.counts.of(runId)), now, runId);
    });
    this.retired.add(runId);
    this.sweeper?.add(runId);
  }

  /**
   * Counters from memory plus two counts over small partial indexes: queued tasks still waiting
   * for their retry delay, and leases already expired (counted as ready, as lease() would take
   * them back). Cost grows with those two sets only, not with the size of the crawl.
   */
  async stats(runId?: string): Promise<FrontierStats> {
    this.assertOpen();
    if (runId !== undefined) assertRunId(runId);
    try {
      const now = this.clock();
      const counts = runId === undefined ? this.counts.sum(this.retired) : this.counts.of(runId);
      const delayed =
        (runId === undefined
          ? this.stmts.countDelayed.get(now)
          : this.stmts.countDelayedOfRun.get(now, runId)
        )?.n ?? 0;
      const expired =
        (runId === undefined
          ? this.stmts.countExpired.get(now)
          : this.stmts.countExpiredOfRun.get(now, runId)
        )?.n ?? 0;
      const { queued, leased, done, failed, cancelled } = counts;
      return {
        ready: queued - delayed + expired,
        delayed,
        leased: leased - expired,
        done,
        failed,
        total: totalOf(counts),
        cancelled,
      };
    } catch (err) {
      throw toFrontierError(err, 'stats', this.path);
    }
  }

  async checkpoint(): Promise<string | null> {
    this.assertOpen();
    return this.lastCheckpoint;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Its writes are synchronous, so none is under way: it stops; the rest goes at the next open.
    await this.sweeper?.close();
    try {
      this.db.close();
    } catch (err) {
      throw toFrontierError(err, 'close', this.path);
    }
  }

  /**
   * Deletes up to `limit` tasks of a retired run, leased ones left for their outcomes, and keeps
   * its counters beside it in the same write (the tasks they were counted from are going).
   */
  private sweepTasks(runId: string, limit: number): number {
    if (this.closed || !this.retired.has(runId)) return 0;
    return this.write('sweep', () => {
      this.stmts.setFinalCounts.run(JSON.stringify(this.counts.of(runId)), runId);
      return this.stmts.sweepTasks.run(runId, limit).changes;
    });
  }

  private setRunState(runId: string, state: 'active' | 'paused'): void {
    assertRunId(runId);
    this.assertOpen();
    if (this.runStates.get(runId) === 'cancelled') throw runCancelledError(runId);
    if (this.runStates.get(runId) === state) return;
    this.write(state === 'paused' ? 'pauseRun' : 'resumeRun', (now) =>
      this.stmts.setRunState.run(runId, RunStateValue[state], now),
    );
    this.runStates.set(runId, state);
  }

  private runsIn(state: RunState): string[] {
    const ids: string[] = [];
    for (const [runId, s] of this.runStates) if (s === state) ids.push(runId);
    return ids;
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction (committed, and with synchronous=FULL on disk, when
   * this returns). Counter changes are collected in `delta` and applied only after the commit, so
   * a rolled-back transaction leaves the counters right.
   */
  private write<T>(op: string, fn: (now: number, delta: Delta) => T): T {
    this.assertOpen();
    const delta = new Delta();
    let result: T;
    try {
      const now = this.clock();
      result = this.transaction.immediate(() => fn(now, delta)) as T;
    } catch (err) {
      throw toFrontierError(err, op, this.path);
    }
    this.counts.merge(delta);
    return result;
  }

  /**
   * Inserts tasks whose URL is new to their run, up to the run's `maxTotal` rows ever; returns the
   * ones accepted, and whether a cap kept out a URL its run did not already have (`capped`). Tasks
   * of a cancelled run are left out (neither accepted nor capped).
   */
  private insert(
    tasks: readonly NewTask[],
    maxTotal: RunLimit | undefined,
    now: number,
    delta: Delta,
  ): { accepted: NewTask[]; capped: boolean } {
    const accepted: NewTask[] = [];
    let capped = false;
    const caps = new Map<string, number | undefined>();
    for (const task of tasks) {
      const runId = task.runId;
      const runState = this.runStates.get(runId);
      if (runState === 'cancelled' || (this.retired.size > 0 && this.retired.has(runId))) continue;
      if (runState === undefined) {
        this.stmts.addRun.run(runId, now);
        this.runStates.set(runId, 'active');
      }
      let cap = caps.get(runId);
      if (!caps.has(runId)) caps.set(runId, (cap = runCap(maxTotal, runId)));
      if (cap !== undefined && totalOf(this.counts.of(runId)) + totalOf(delta.of(runId)) >= cap) {
        capped ||= this.stmts.known.get(runId, task.url) === undefined;
        continue;
      }
      const level = clampLevel(task.priority);
      const { changes } = this.stmts.insert.run(
        runId,
        task.url,
        task.host,
        task.depth,
        level,
        level,
        task.parentUrl ?? null,
        task.kind === 'sitemap' ? 'sitemap' : null,
        task.lastmod ?? null,
        now,
        now,
        now,
      );
      if (changes === 0) continue;
      accepted.push(task);
      delta.of(runId).queued += 1;
    }
    return { accepted, capped };
  }

  private requeueExpired(now: number, delta: Delta): void {
    for (const row of this.stmts.requeueExpired.all(now, now, now)) moveTo(delta, row, 'leased');
  }

  /** Runs `update` for a well-formed lease reference; the changed row, or undefined when stale. */
  private apply(
    lease: LeaseRef,
    update: (id: number, leaseId: string) => ChangedRow | undefined,
  ): ChangedRow | undefined {
    const id = parseTaskId(lease.taskId);
    if (id === null || typeof lease.leaseId !== 'string') return undefined;
    return update(id, lease.leaseId);
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.path);
  }
}

/** A row an update moved out of `from` into the state it now has. */
function moveTo(delta: Delta, row: ChangedRow, from: CountKey): void {
  delta.move(row.run_id, from, STATE_KEYS[row.state] ?? 'queued');
}

/** A task id this frontier handed out (a row id as a decimal string), or null: never ours, so stale. */
function parseTaskId(taskId: unknown): number | null {
  if (typeof taskId !== 'string' || !/^[1-9][0-9]{0,15}$/.test(taskId)) return null;
  const id = Number(taskId);
  return Number.isSafeInteger(id) ? id : null;
}

function toLease(row: TaskRow, leaseId: string): Lease {
  return {
    runId: row.run_id,
    url: row.url,
    host: row.host,
    depth: row.depth,
    priority: row.priority,
    parentUrl: row.parent_url,
    taskId: String(row.id),
    leaseId,
    attempt: row.attempt,
    lastError: row.last_error,
    // Spreads last: on Node 20 a property written after a spread goes through V8's runtime.
    ...(row.kind === 'sitemap' ? { kind: 'sitemap' as const } : {}),
    ...(row.lastmod === null ? {} : { lastmod: row.lastmod }),
  };
}

/** A retired run's kept counters; null when missing or unreadable (its tasks' count stands). */
function parseCounts(json: string | null): Counts | null {
  if (json === null) return null;
  try {
    const raw = JSON.parse(json) as Partial<Record<CountKey, unknown>>;
    const counts = zeroCounts();
    for (const key of Object.keys(counts) as CountKey[]) {
      const n = raw[key];
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) return null;
      counts[key] = n;
    }
    return counts;
  } catch {
    return null;
  }
}
