import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { AppError } from '../../errors.js';
import type { SqlDriver, SqlRow, SqlSession, SqlValue } from './driver.js';
import { enterWalMode } from '../sqlite-wal.js';
import { toSqlError } from './errors.js';
import { classifySqliteError } from './sqlite-errors.js';

export interface SqliteDriverOptions {
  /** A file path, or `:memory:`. Its folder is made if missing. */
  path: string;
  /** How long a statement waits for another process's write lock before SQL_BUSY (default 5000). */
  busyTimeoutMs?: number;
}

interface Prepared {
  statement: Database.Statement;
  /** `params` index for each `?`, in order: `$n` placeholders rewritten for better-sqlite3. */
  order: number[];
}

/**
 * The embedded default: one better-sqlite3 connection in WAL mode with synchronous=FULL (a
 * commit is on disk when it returns), so other processes may read while one writes.
 *
 * better-sqlite3 is synchronous, but the store's transactions are async functions: a statement of
 * one caller could land inside another caller's open transaction. So everything on the connection
 * takes turns through one queue, and a transaction holds it from BEGIN to COMMIT. Stores opened
 * on the same file in one process share that queue: SQLite's busy wait is synchronous, so a
 * second connection waiting for the lock would block the very event loop the first one needs to
 * reach its COMMIT (other processes wait for each other through busy_timeout as usual). Write
 * transactions begin IMMEDIATE, which takes the write lock at once rather than upgrading later
 * (the upgrade is where WAL readers deadlock with SQLITE_BUSY).
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly prepared = new Map<string, Prepared>();
  private readonly turns: Turns;

  constructor(options: SqliteDriverOptions) {
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    this.db = new Database(options.path, { timeout: busyTimeoutMs });
    this.turns = Turns.for(options.path === ':memory:' ? this : resolve(options.path));
    try {
      enterWalMode(this.db, busyTimeoutMs);
      this.db.pragma('synchronous = FULL');
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    } catch (err) {
      this.db.close();
      this.turns.release();
      throw err;
    }
  }

  all(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return this.turn(() => this.allNow(sql, params));
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.turn(() => this.runNow(sql, params));
  }

  transaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.turn(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn({
          all: async (sql, params = []) => this.allNow(sql, params),
          run: async (sql, params = []) => this.runNow(sql, params),
        });
        this.db.exec('COMMIT');
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /** `BEGIN IMMEDIATE` is the schema lock: a second process waits (busy_timeout) for the first. */
  migrationTransaction<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  toError(err: unknown, op: string): AppError {
    return toSqlError('sqlite', op, err, classifySqliteError);
  }

  close(): Promise<void> {
    return this.turn(() => {
      if (this.db.open) {
        this.db.close();
        this.turns.release();
      }
    });
  }

  private turn<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.turns.take(fn);
  }

  private allNow(sql: string, params: readonly SqlValue[]): SqlRow[] {
    const { statement, order } = this.prepare(sql);
    return statement.all(...order.map((i) => params[i] ?? null)) as SqlRow[];
  }

  private runNow(sql: string, params: readonly SqlValue[]): number {
    const { statement, order } = this.prepare(sql);
    return statement.run(...order.map((i) => params[i] ?? null)).changes;
  }

  private prepare(sql: string): Prepared {
    let prepared = this.prepared.get(sql);
    if (!prepared) {
      const order: number[] = [];
      const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
        order.push(Number(n) - 1);
        return '?';
      });
      prepared = { statement: this.db.prepare(text), order };
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }
}

/** One queue per database file in this process, shared by every driver open on it. */
class Turns {
  private static readonly byFile = new Map<unknown, Turns>();
  private queue: Promise<unknown> = Promise.resolve();
  private users = 0;

  private constructor(private readonly file: unknown) {}

  static for(file: unknown): Turns {
    let turns = Turns.byFile.get(file);
    if (!turns) {
      turns = new Turns(file);
      Turns.byFile.set(file, turns);
    }
    turns.users += 1;
    return turns;
  }

  take<T>(fn: () => T | Promise<T>): Promise<T> {
    const result = this.queue.then(fn);
    this.queue = result.catch(() => undefined);
    return result;
  }

  release(): void {
    this.users -= 1;
    if (this.users <= 0) Turns.byFile.delete(this.file);
  }
}
