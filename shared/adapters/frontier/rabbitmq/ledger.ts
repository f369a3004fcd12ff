import Database from 'better-sqlite3';
import { StorageError } from '../../../errors.js';
import type { NewTask } from '../../../protocol/task.js';
import { toFrontierError } from '../sqlite-errors.js';

/** A URL's state in the ledger. Rows are never deleted: the table is the crawl's seen-set. */
export const LedgerState = { accepted: 0, done: 1, failed: 2 } as const;
export type LedgerStateValue = (typeof LedgerState)[keyof typeof LedgerState];

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

/** What one settle or push records, in one transaction. */
export interface LedgerChanges {
  accepted?: readonly NewTask[];
  done?: readonly string[];
  failed?: readonly string[];
  retried?: readonly { url: string; attempt: number }[];
  checkpoint?: string;
}

const LEDGER_KIND = 'ackcrawl-rabbitmq-ledger';
const LEDGER_VERSION = '1';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS urls (
    url     TEXT    PRIMARY KEY,
    state   INTEGER NOT NULL,
    attempt INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/**
 * The RabbitMQ frontier's local record, one SQLite file: every URL accepted (the seen-set, on disk,
 * so memory stays flat) with its state, the counters behind stats() and maxTotal, and the sink
 * checkpoint. The broker holds the work; the ledger holds what the work was. Writes are
 * synchronous=FULL: a URL marked done here is acked in the broker right after, so the mark must
 * not be lost (a lost mark would leave a URL pending with no message to finish it).
 */
export class Ledger {
  private readonly db: Database.Database;
  private readonly stmts: ReturnType<typeof prepare>;
  private readonly writeTx: Database.Transaction<(changes: LedgerChanges) => LedgerCounts>;
  private current: LedgerCounts;
  private lastCheckpoint: string | null;

  constructor(
    readonly path: string,
    cacheSizeMb = 16,
  ) {
    try {
      this.db = new Database(path, { timeout: 5_000 });
    } catch (err) {
      throw toFrontierError(err, 'open ledger', path);
    }
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma(`cache_size = ${-Math.round(cacheSizeMb * 1024)}`);
      this.db.exec(
        'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID',
      );
      this.checkKind();
      this.db.exec(SCHEMA);
      this.stmts = prepare(this.db);
      this.current = {
        total: this.readCounter('total'),
        done: this.readCounter('done'),
        failed: this.readCounter('failed'),
      };
      this.lastCheckpoint = this.stmts.getMeta.get('checkpoint')?.value ?? null;
      this.writeTx = this.db.transaction((changes: LedgerChanges) => this.apply(changes));
    } catch (err) {
      this.db.close();
      throw toFrontierError(err, 'open ledger', path);
    }
  }

  get counts(): LedgerCounts {
    return { ...this.current };
  }

  get checkpoint(): string | null {
    return this.lastCheckpoint;
  }

  lookup(url: string): LedgerEntry | undefined {
    try {
      return this.stmts.lookup.get(url);
    } catch (err) {
      throw toFrontierError(err, 'ledger lookup', this.path);
    }
  }

  /**
   * The tasks to accept: URLs neither in the ledger nor earlier in `tasks`, at most `room` of them;
   * `capped` when the room kept out a URL the ledger does not have. Nothing is recorded: the caller
   * publishes them first and records them after the confirm.
   */
  unseen(tasks: readonly NewTask[], room: number): { fresh: NewTask[]; capped: boolean } {
    const fresh: NewTask[] = [];
    const inCall = new Set<string>();
    try {
      for (const task of tasks) {
        if (inCall.has(task.url)) continue;
        const known = this.stmts.lookup.get(task.url) !== undefined;
        if (known) continue;
        if (fresh.length >= room) return { fresh, capped: true };
        inCall.add(task.url);
        fresh.push(task);
      }
    } catch (err) {
      throw toFrontierError(err, 'ledger lookup', this.path);
    }
    return { fresh, capped: false };
  }

  /** Records a push or a settlement in one durable transaction; counters follow only on commit. */
  record(changes: LedgerChanges): void {
    try {
      this.current = this.writeTx.immediate(changes);
    } catch (err) {
      throw toFrontierError(err, 'ledger write', this.path);
    }
    if (changes.checkpoint !== undefined) this.lastCheckpoint = changes.checkpoint;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private apply(changes: LedgerChanges): LedgerCounts {
    const next = { ...this.current };
    const s = this.stmts;
    for (const task of changes.accepted ?? []) {
      next.total += s.insert.run(task.url, LedgerState.accepted, 1).changes;
    }
    for (const { url, attempt } of changes.retried ?? []) {
      const row = s.lookup.get(url);
      if (row === undefined) {
        s.insert.run(url, LedgerState.accepted, attempt);
        next.total += 1;
      } else if (row.state === LedgerState.accepted && row.attempt < attempt) {
        s.setAttempt.run(attempt, url);
      }
    }
    const finish = (url: string, state: LedgerStateValue, counter: 'done' | 'failed'): void => {
      const row = s.lookup.get(url);
      // A message whose push crashed between the confirm and the ledger is accepted on its outcome.
      if (row === undefined) {
        s.insert.run(url, state, 1);
        next.total += 1;
        next[counter] += 1;
      } else if (row.state === LedgerState.accepted) {
        s.setState.run(state, url);
        next[counter] += 1;
      }
    };
    for (const url of changes.done ?? []) finish(url, LedgerState.done, 'done');
    for (const url of changes.failed ?? []) finish(url, LedgerState.failed, 'failed');
    s.setMeta.run('total', String(next.total));
    s.setMeta.run('done', String(next.done));
    s.setMeta.run('failed', String(next.failed));
    if (changes.checkpoint !== undefined) s.setMeta.run('checkpoint', changes.checkpoint);
    return next;
  }

  /** A file of another kind (the SQLite frontier's, say) or a newer ledger is refused, not mixed. */
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
    if (kind !== LEDGER_KIND || version !== LEDGER_VERSION) {
      throw new StorageError(
        'FRONTIER_SCHEMA',
        `${this.path} is not a RabbitMQ frontier ledger this build reads (kind ${kind ?? '?'}, version ${version ?? '?'})`,
        { details: { path: this.path } },
      );
    }
  }

  private readCounter(key: string): number {
    const value = Number(this.stmts.getMeta.get(key)?.value ?? '0');
    return Number.isSafeInteger(value) && value >= 0 ? value : 0;
  }
}

function prepare(db: Database.Database) {
  return {
    lookup: db.prepare<[string], LedgerEntry>('SELECT state, attempt FROM urls WHERE url = ?'),
    insert: db.prepare<[string, number, number]>(
      'INSERT OR IGNORE INTO urls (url, state, attempt) VALUES (?, ?, ?)',
    ),
    setState: db.prepare<[number, string]>('UPDATE urls SET state = ? WHERE url = ?'),
    setAttempt: db.prepare<[number, string]>('UPDATE urls SET attempt = ? WHERE url = ?'),
    getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare<[string, string]>('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
  };
}
