import Database from 'better-sqlite3';
import type { TaskValidators, Validators } from '../../shared/protocol/messages.js';

/** What the index keeps of a URL's last capture with a body, per job. */
export interface KnownCapture {
  validators: TaskValidators;
  /** The links the scheduler followed from that capture (the crawler's follow list). */
  links: string[];
}

/** One settled page that updates the index (written in the settler's commit). */
export interface CaptureUpdate {
  jobId: string;
  runId: string;
  url: string;
  /** `ok`: a fetched page, its own capture; `not-modified`: a 304 confirming the known one. */
  kind: 'ok' | 'not-modified';
  captureId: string;
  validators: Validators | undefined;
  links: readonly string[];
}

export interface ValidatorsIndexOptions {
  /** The index file (`<dataDir>/validators.sqlite`); created when missing. */
  path: string;
  /** URLs kept over all jobs; the least recently settled go first (default 1,000,000). */
  maxEntries?: number;
  /** A capture whose links take more than this, as JSON, is not kept (default 1 MiB). */
  maxLinksBytes?: number;
  /** SQLite page cache, a fixed amount of memory (default 8 MiB). */
  cacheSizeMb?: number;
  clock?: () => number;
}

/** How long a job found without captures is taken to have none before the index is asked again. */
const JOB_RECHECK_MS = 10_000;

export const VALIDATORS_INDEX_DEFAULTS = { maxEntries: 1_000_000, maxLinksBytes: 1024 * 1024 } as const;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS captures (
    job_id        TEXT    NOT NULL,
    url           TEXT    NOT NULL,
    etag          TEXT,
    last_modified TEXT,
    capture_id    TEXT    NOT NULL,
    links         TEXT    NOT NULL,
    settled_at    INTEGER NOT NULL,
    PRIMARY KEY (job_id, url)
  );
  CREATE INDEX IF NOT EXISTS captures_settled ON captures (settled_at);
  CREATE TABLE IF NOT EXISTS run_counts (
    run_id       TEXT    PRIMARY KEY,
    not_modified INTEGER NOT NULL
  );
`;

/**
 * The scheduler's durable record of each URL's last capture per job: its ETag and Last-Modified
 * (what a recrawl's conditional request sends), its capture id (what a 304 confirms) and the links
 * followed from it (what a not-modified page's run follows instead, docs/recrawl.md). And each
 * run's count of not-modified pages, updated in the same transaction.
 *
 * SQLite in the scheduler's data dir: looked up synchronously at dispatch (a primary-key read,
 * microseconds, no network on the hot path), written once per settled batch. Bounded: beyond
 * `maxEntries` the least recently settled URLs are dropped, and they are simply fetched in full.
 * Losing the file costs only that: every page is fetched in full once more.
 */
export class ValidatorsIndex {
  private readonly db: Database.Database;
  private readonly maxEntries: number;
  private readonly maxLinksBytes: number;
  private readonly clock: () => number;
  private entries: number;
  /**
   * Which jobs have captures here, so that lookups for a job with none skip SQLite: a job's first
   * run, or a site that sends no validators (that lookup took about 4 % of the scheduler's CPU on a
   * 20,000-page crawl). A job seen with captures stays known (a trim that drops its last one only
   * costs a lookup that finds nothing). A job seen without is asked again after
   * `JOB_RECHECK_MS`, so captures another process wrote into the same file count from then on.
   */
  private readonly jobsWithCaptures = new Set<string>();
  private readonly jobsWithoutSince = new Map<string, number>();
  private readonly anyOfJob: Database.Statement<[string]>;
  private closed = false;
  private readonly find: Database.Statement<[string, string]>;
  private readonly upsert: Database.Statement<unknown[]>;
  private readonly refresh: Database.Statement<unknown[]>;
  private readonly count: Database.Statement<[string, number]>;
  private readonly countOf: Database.Statement<[string]>;
  private readonly evict: Database.Statement<[number]>;
  private readonly writeBatch: (updates: readonly CaptureUpdate[]) => void;

  constructor(options: ValidatorsIndexOptions) {
    this.maxEntries = options.maxEntries ?? VALIDATORS_INDEX_DEFAULTS.maxEntries;
    this.maxLinksBytes = options.maxLinksBytes ?? VALIDATORS_INDEX_DEFAULTS.maxLinksBytes;
    this.clock = options.clock ?? Date.now;
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    // A commit lost to a power cut costs a full fetch of its pages next time, nothing more.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`cache_size = -${(options.cacheSizeMb ?? 8) * 1024}`);
    this.db.exec(SCHEMA);
    this.find = this.db.prepare(
      'SELECT etag, last_modified, capture_id, links FROM captures WHERE job_id = ? AND url = ?',
    );
    this.upsert = this.db.prepare(
      `INSERT INTO captures (job_id, url, etag, last_modified, capture_id, links, settled_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (job_id, url) DO UPDATE SET etag = excluded.etag,
         last_modified = excluded.last_modified, capture_id = excluded.capture_id,
         links = excluded.links, settled_at = excluded.settled_at`,
    );
    // A 304 keeps the capture it confirmed (the one with the body) and its links; a server may
    // send new validators with it (RFC 9110 §15.4.5).
    this.refresh = this.db.prepare(
      `UPDATE captures SET etag = coalesce(?, etag), last_modified = coalesce(?, last_modified),
         settled_at = ? WHERE job_id = ? AND url = ?`,
    );
    this.count = this.db.prepare(
      `INSERT INTO run_counts (run_id, not_modified) VALUES (?, ?)
       ON CONFLICT (run_id) DO UPDATE SET not_modified = not_modified + excluded.not_modified`,
    );
    this.countOf = this.db.prepare('SELECT not_modified FROM run_counts WHERE run_id = ?');
    this.evict = this.db.prepare(
      `DELETE FROM captures WHERE (job_id, url) IN
         (SELECT job_id, url FROM captures ORDER BY settled_at LIMIT ?)`,
    );
    this.entries = (this.db.prepare('SELECT count(*) AS n FROM captures').get() as { n: number }).n;
    this.anyOfJob = this.db.prepare('SELECT 1 FROM captures WHERE job_id = ? LIMIT 1').pluck();
    this.writeBatch = this.db.transaction((updates: readonly CaptureUpdate[]) => this.apply(updates));
  }

  /** The last capture of `url` in `jobId` with validators, or null (fetch in full). */
  lookup(jobId: string, url: string): KnownCapture | null {
    if (!this.hasCaptures(jobId)) return null;
    const row = this.find.get(jobId, url) as
      { etag: string | null; last_modified: string | null; capture_id: string; links: string } | undefined;
    if (!row || (row.etag === null && row.last_modified === null)) return null;
    return {
      validators: {
        captureId: row.capture_id,
        ...(row.etag === null ? {} : { etag: row.etag }),
        ...(row.last_modified === null ? {} : { lastModified: row.last_modified }),
      },
      links: JSON.parse(row.links) as string[],
    };
  }

  private hasCaptures(jobId: string): boolean {
    if (this.jobsWithCaptures.has(jobId)) return true;
    const now = this.clock();
    const since = this.jobsWithoutSince.get(jobId);
    if (since !== undefined && now - since < JOB_RECHECK_MS) return false;
    if (this.anyOfJob.get(jobId) === undefined) {
      this.jobsWithoutSince.set(jobId, now);
      return false;
    }
    this.jobsWithoutSince.delete(jobId);
    this.jobsWithCaptures.add(jobId);
    return true;
  }

  /** Not-modified pages of a run so far (durable: a restarted scheduler goes on counting). */
  notModified(runId: string): number {
    const row = this.countOf.get(runId) as { not_modified: number } | undefined;
    return row?.not_modified ?? 0;
  }

  /** One settled batch's pages, in one transaction. */
  record(updates: readonly CaptureUpdate[]): void {
    if (updates.length === 0 || this.closed) return;
    this.writeBatch(updates);
  }

  private apply(updates: readonly CaptureUpdate[]): void {
    const now = this.clock();
    const notModified = new Map<string, number>();
    for (const u of updates) {
      if (u.kind === 'not-modified') {
        notModified.set(u.runId, (notModified.get(u.runId) ?? 0) + 1);
        this.refresh.run(u.validators?.etag ?? null, u.validators?.lastModified ?? null, now, u.jobId, u.url);
        continue;
      }
      // Without validators, or with links too many to keep, the next run fetches it in full.
      const links = JSON.stringify(u.links);
      if (u.validators === undefined || links.length > this.maxLinksBytes) continue;
      this.upsert.run(
        u.jobId,
        u.url,
        u.validators.etag ?? null,
        u.validators.lastModified ?? null,
        u.captureId,
        links,
        now,
      );
      this.jobsWithCaptures.add(u.jobId);
      this.jobsWithoutSince.delete(u.jobId);
      // An upsert reports one change, insert or update: `entries` is an upper bound, made exact
      // by a count when it passes `maxEntries`.
      this.entries += 1;
    }
    for (const [runId, n] of notModified) this.count.run(runId, n);
    if (this.entries > this.maxEntries) this.trim();
  }

  private trim(): void {
    this.entries = (this.db.prepare('SELECT count(*) AS n FROM captures').get() as { n: number }).n;
    const over = this.entries - this.maxEntries;
    if (over <= 0) return;
    // A tenth more than needed: a full index trims once per many batches, not once per batch.
    const drop = over + Math.ceil(this.maxEntries / 10);
    this.entries -= this.evict.run(drop).changes;
  }

  /** Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
