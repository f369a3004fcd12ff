import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Lease, NewTask } from '../../protocol/task.js';
import type {
  Frontier,
  FrontierStats,
  LeaseOptions,
  TaskView,
  PushOptions,
  Settlement,
  SettleResult,
} from '../../ports/frontier.js';
import { InvalidInputError } from '../../errors.js';
import { closedError, toFrontierError } from './sqlite-errors.js';
import { openDatabase, State, type SqliteDurability } from './sqlite-schema.js';
import { prepareStatements, type Statements, type TaskRow } from './sqlite-statements.js';
import { assertLeaseMs, assertNewTasks, assertSettlement } from './task-input.js';

export interface SqliteFrontierOptions {
  /** The frontier file; created with its schema when missing. */
  path: string;
  /** Default lease duration for lease(). 60 s unless given. */
  leaseMs?: number;
  /** Milliseconds since the epoch; injectable for tests. Date.now unless given. */
  clock?: () => number;
  /** SQLite page cache, a fixed amount of memory. 32 MiB unless given. */
  cacheSizeMb?: number;
  /** See SqliteDurability; `full` unless a caller can replay lost commits. */
  durability?: SqliteDurability;
}

export interface SqliteFrontier extends Frontier {
  readonly path: string;
  /**
   * Puts every leased task back, ready at once, attempt unchanged; returns how many. For the
   * embedded scheduler at start: it is the only consumer of its file, so every lease left in it
   * belongs to a run that is gone. Never call it while another process is leasing from the file.
   */
  releaseAllLeases(): number;
}

type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'>;

/** Rows per state. Kept in memory (recounted at open) so stats() stays cheap on a large file. */
interface Counts {
  queued: number;
  leased: number;
  done: number;
  failed: number;
}

const STATE_KEYS: Record<number, keyof Counts> = {
  [State.queued]: 'queued',
  [State.leased]: 'leased',
  [State.done]: 'done',
  [State.failed]: 'failed',
};

/**
 * Opens the SQLite frontier at `options.path`. One process should own a file: the per-state
 * counters behind stats() and maxTotal live in this object. A task's `attempt` starts at 1 and
 * grows only with a retry settlement; an expired or released lease puts the task back with the
 * same attempt. Times (available_at, lease expiry) come from `clock`.
 */
export function openSqliteFrontier(options: SqliteFrontierOptions): SqliteFrontier {
  const leaseMs = options.leaseMs ?? 60_000;
  assertLeaseMs(leaseMs);
  const cacheSizeMb = options.cacheSizeMb ?? 32;
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
    return new SqliteFrontierImpl(db, options.path, leaseMs, options.clock ?? Date.now);
  } catch (err) {
    db.close();
    throw toFrontierError(err, 'open', options.path);
  }
}

class SqliteFrontierImpl implements SqliteFrontier {
  private readonly stmts: Statements;
  private readonly transaction: Database.Transaction<(fn: () => unknown) => unknown>;
  private readonly counts: Counts = { queued: 0, leased: 0, done: 0, failed: 0 };
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
  ) {
    this.stmts = prepareStatements(db);
    this.transaction = db.transaction((fn: () => unknown) => fn());
    for (const { state, n } of this.stmts.countByState.all()) {
      const key = STATE_KEYS[state];
      if (key !== undefined) this.counts[key] = n;
    }
    this.lastCheckpoint = this.stmts.getMeta.get('checkpoint')?.value ?? null;
  }

  async push(tasks: readonly NewTask[], options: PushOptions = {}): Promise<NewTask[]> {
    assertNewTasks(tasks);
    return this.write('push', (now, delta) => this.insert(tasks, options.maxTotal, now, delta).accepted);
  }

  async inspect(url: string): Promise<TaskView | null> {
    this.assertOpen();
    const row = this.stmts.inspect.get(url);
    if (row === undefined) return null;
    const now = this.clock();
    const state =
      row.state === State.done
        ? 'done'
        : row.state === State.failed
          ? 'failed'
          : row.state === State.leased
            ? 'leased'
            : row.available_at > now
              ? 'delayed'
              : 'queued';
    return {
      url: row.url,
      state,
      attempt: row.attempt,
      lastError: row.last_error,
      availableAt: state === 'delayed' ? row.available_at : null,
      depth: row.depth,
      parentUrl: row.parent_url,
    };
  }

  async lease(max: number, options: LeaseOptions = {}): Promise<Lease[]> {
    if (!(max >= 1)) return [];
    const limit = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
    const leaseMs = options.leaseMs ?? this.leaseMs;
    assertLeaseMs(leaseMs);
    const exclude = JSON.stringify(options.excludeHosts ?? []);
    return this.write('lease', (now, delta) => {
      this.requeueExpired(now, delta);
      const rows = this.stmts.selectReady.all(now, exclude, limit);
      return rows.map((row) => {
        const leaseId = `${this.leaseToken}.${(this.leaseSeq += 1).toString(36)}`;
        this.stmts.markLeased.run(leaseId, now + leaseMs, now, row.id);
        move(delta, 'queued', 'leased');
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
      const discover = (discovered: readonly NewTask[] | undefined): void => {
        if (discovered === undefined) return;
        const inserted = this.insert(discovered, batch.maxTotal, now, delta);
        accepted += inserted.accepted.length;
        capped ||= inserted.capped;
      };
      for (const { lease, discovered } of batch.acks) {
        if (!this.apply(lease, (id, leaseId) => this.stmts.ack.run(now, id, leaseId))) continue;
        move(delta, 'leased', 'done');
        applied += 1;
        // A stale ack pushes nothing: the lease that replaced it will report its own links.
        discover(discovered);
      }
      for (const { lease, delayMs, error } of batch.retries) {
        const availableAt = now + Math.max(0, delayMs);
        if (!this.apply(lease, (id, leaseId) => this.stmts.retry.run(availableAt, error, now, id, leaseId))) {
          continue;
        }
        move(delta, 'leased', 'queued');
        applied += 1;
      }
      for (const { lease, error, discovered } of batch.failures) {
        if (!this.apply(lease, (id, leaseId) => this.stmts.fail.run(error, now, id, leaseId))) continue;
        move(delta, 'leased', 'failed');
        applied += 1;
        discover(discovered);
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
        if (this.apply(lease, (id, leaseId) => this.stmts.release.run(now, now, id, leaseId))) {
          move(delta, 'leased', 'queued');
        }
      }
    });
  }

  /** Each matching lease now lasts until now + leaseMs, or longer if it already did. */
  async renew(leases: readonly LeaseRef[], leaseMs: number): Promise<void> {
    assertLeaseMs(leaseMs);
    this.write('renew', (now) => {
      for (const lease of leases) {
        this.apply(lease, (id, leaseId) => this.stmts.renew.run(now + leaseMs, now, id, leaseId));
      }
    });
  }

  releaseAllLeases(): number {
    return this.write('releaseAllLeases', (now, delta) => {
      const n = this.stmts.releaseAll.run(now, now).changes;
      delta.leased -= n;
      delta.queued += n;
      return n;
    });
  }

  /**
   * Counters from memory plus two counts over small partial indexes: queued tasks still waiting
   * for their retry delay, and leases already expired (counted as ready, as lease() would take
   * them back). Cost grows with those two sets only, not with the size of the crawl.
   */
  async stats(): Promise<FrontierStats> {
    this.assertOpen();
    try {
      const now = this.clock();
      const delayed = this.stmts.countDelayed.get(now)?.n ?? 0;
      const expired = this.stmts.countExpired.get(now)?.n ?? 0;
      const { queued, leased, done, failed } = this.counts;
      return {
        ready: queued - delayed + expired,
        delayed,
        leased: leased - expired,
        done,
        failed,
        total: queued + leased + done + failed,
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
    try {
      this.db.close();
    } catch (err) {
      throw toFrontierError(err, 'close', this.path);
    }
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction (committed, and with synchronous=FULL on disk, when
   * this returns). Counter changes are collected in `delta` and applied only after the commit, so
   * a rolled-back transaction leaves the counters right.
   */
  private write<T>(op: string, fn: (now: number, delta: Counts) => T): T {
    this.assertOpen();
    const delta: Counts = { queued: 0, leased: 0, done: 0, failed: 0 };
    let result: T;
    try {
      const now = this.clock();
      result = this.transaction.immediate(() => fn(now, delta)) as T;
    } catch (err) {
      throw toFrontierError(err, op, this.path);
    }
    this.counts.queued += delta.queued;
    this.counts.leased += delta.leased;
    this.counts.done += delta.done;
    this.counts.failed += delta.failed;
    return result;
  }

  /**
   * Inserts tasks whose URL is new, up to `maxTotal` rows ever; returns the ones accepted, and
   * whether the cap kept out a URL not already here (`capped`).
   */
  private insert(
    tasks: readonly NewTask[],
    maxTotal: number | undefined,
    now: number,
    delta: Counts,
  ): { accepted: NewTask[]; capped: boolean } {
    const accepted: NewTask[] = [];
    const c = this.counts;
    let total =
      c.queued + c.leased + c.done + c.failed + delta.queued + delta.leased + delta.done + delta.failed;
    for (const [i, task] of tasks.entries()) {
      if (maxTotal !== undefined && total >= maxTotal) {
        const capped = tasks.slice(i).some((t) => this.stmts.known.get(t.url) === undefined);
        return { accepted, capped };
      }
      const parentUrl = task.parentUrl ?? null;
      const { changes } = this.stmts.insert.run(
        task.url,
        task.host,
        task.depth,
        task.priority,
        parentUrl,
        task.kind === 'sitemap' ? 'sitemap' : null,
        task.lastmod ?? null,
        now,
        now,
        now,
      );
      if (changes === 0) continue;
      accepted.push(task);
      delta.queued += 1;
      total += 1;
    }
    return { accepted, capped: false };
  }

  private requeueExpired(now: number, delta: Counts): void {
    const n = this.stmts.requeueExpired.run(now, now, now).changes;
    delta.leased -= n;
    delta.queued += n;
  }

  /** Runs `update` for a well-formed lease reference; true when it changed the task's row. */
  private apply(lease: LeaseRef, update: (id: number, leaseId: string) => Database.RunResult): boolean {
    const id = parseTaskId(lease.taskId);
    if (id === null || typeof lease.leaseId !== 'string') return false;
    return update(id, lease.leaseId).changes > 0;
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.path);
  }
}

function move(delta: Counts, from: keyof Counts, to: keyof Counts): void {
  delta[from] -= 1;
  delta[to] += 1;
}

/** A task id this frontier handed out (a row id as a decimal string), or null: never ours, so stale. */
function parseTaskId(taskId: unknown): number | null {
  if (typeof taskId !== 'string' || !/^[1-9][0-9]{0,15}$/.test(taskId)) return null;
  const id = Number(taskId);
  return Number.isSafeInteger(id) ? id : null;
}

function toLease(row: TaskRow, leaseId: string): Lease {
  return {
    url: row.url,
    host: row.host,
    depth: row.depth,
    priority: row.priority,
    parentUrl: row.parent_url,
    ...(row.kind === 'sitemap' ? { kind: 'sitemap' as const } : {}),
    ...(row.lastmod === null ? {} : { lastmod: row.lastmod }),
    taskId: String(row.id),
    leaseId,
    attempt: row.attempt,
    lastError: row.last_error,
  };
}
