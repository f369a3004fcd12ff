import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { enterWalMode } from '../../shared/adapters/sqlite-wal.js';
import { wireCookiesSchema, type WireCookie } from '../../shared/protocol/wire-cookie.js';

/** A session's changes since they were last written: each domain's cookies now, null once it holds none. */
export type SessionChanges = ReadonlyMap<string, readonly WireCookie[] | null>;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS session_cookies (
    run_id  TEXT NOT NULL,
    domain  TEXT NOT NULL,
    cookies TEXT NOT NULL,
    PRIMARY KEY (run_id, domain)
  );
`;

/** How long opening waits for another process holding the file (ms). */
const BUSY_WAIT_MS = 5_000;

export const SESSION_STORE_FILE = 'sessions.sqlite';

interface Opened {
  db: Database.Database;
  select: Database.Statement<[string], { domain: string; cookies: string }>;
  upsert: Database.Statement<[string, string, string]>;
  remove: Database.Statement<[string, string]>;
  removeRun: Database.Statement<[string]>;
}

/**
 * Where a scheduler keeps its runs' sessions (`sessionCookies`), so that a scheduler killed and
 * started again goes on with the cookies its hosts set, instead of as a visitor who never came: a
 * site behind a session cookie would answer the rest of its pages 403. SQLite beside the
 * scheduler's other state, one row per run and cookie domain, written in one transaction for all
 * the domains that changed (at most every flush interval, see SessionFlusher). The file is made by
 * the first session written: a scheduler whose runs keep none has none. Losing it costs what a
 * browser with its cookies cleared costs: the session starts afresh.
 */
export class SessionStore {
  private opened: Opened | null = null;

  constructor(private readonly path: string) {}

  /** The run's session as last written; a row that does not read as cookies is left out. */
  load(runId: string): WireCookie[] {
    const store = this.open(false);
    if (store === null) return [];
    const out: WireCookie[] = [];
    for (const row of store.select.iterate(runId)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(row.cookies);
      } catch {
        continue;
      }
      const cookies = wireCookiesSchema.safeParse(parsed);
      if (cookies.success) out.push(...cookies.data);
    }
    return out;
  }

  /** Writes a session's changes, all or none. */
  write(runId: string, changes: SessionChanges): void {
    const store = this.open(true) as Opened;
    store.db.transaction(() => {
      for (const [domain, cookies] of changes) {
        if (cookies === null || cookies.length === 0) store.remove.run(runId, domain);
        else store.upsert.run(runId, domain, JSON.stringify(cookies));
      }
    })();
  }

  /** The run ended, or stopped keeping a session: its cookies go. */
  forget(runId: string): void {
    this.open(false)?.removeRun.run(runId);
  }

  close(): void {
    this.opened?.db.close();
    this.opened = null;
  }

  /** The open file; null when there is none and `create` is false. */
  private open(create: boolean): Opened | null {
    if (this.opened) return this.opened;
    if (!create && !existsSync(this.path)) return null;
    mkdirSync(dirname(this.path), { recursive: true });
    const db = new Database(this.path, { timeout: BUSY_WAIT_MS });
    try {
      enterWalMode(db, BUSY_WAIT_MS);
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      this.opened = {
        db,
        select: db.prepare('SELECT domain, cookies FROM session_cookies WHERE run_id = ?'),
        upsert: db.prepare(
          `INSERT INTO session_cookies (run_id, domain, cookies) VALUES (?, ?, ?)
           ON CONFLICT (run_id, domain) DO UPDATE SET cookies = excluded.cookies`,
        ),
        remove: db.prepare('DELETE FROM session_cookies WHERE run_id = ? AND domain = ?'),
        removeRun: db.prepare('DELETE FROM session_cookies WHERE run_id = ?'),
      };
      return this.opened;
    } catch (err) {
      db.close();
      throw err;
    }
  }
}
