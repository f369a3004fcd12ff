/** What a task asks a crawler to do with its URL: fetch a page, or read a sitemap for more URLs. */
export type TaskKind = 'page' | 'sitemap';

/**
 * The run of a crawl that is not one of many (the scheduler's single crawl, and the data of a
 * frontier written before runs existed, which is migrated into it).
 */
export const DEFAULT_RUN_ID = 'default';

/** A run id: 1-64 of [A-Za-z0-9_-] (it names broker queues and routing keys). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A URL the frontier accepted, before it is leased. `url` is normalised; `host` is its host.
 * Every task belongs to a run: the seen-set, the limits and pause/resume/cancel are per run.
 */
export interface NewTask {
  runId: string;
  url: string;
  host: string;
  depth: number;
  /**
   * The task's priority level, 0..PRIORITY_LEVELS - 1, higher leased first (see taskLevel in
   * task-priority.ts); frontiers round and clamp anything else into that range.
   */
  priority: number;
  parentUrl: string | null;
  /** Absent means 'page'. Frontiers keep it through leases and retries. */
  kind?: TaskKind;
  /** The `<lastmod>` a sitemap gave for this URL, kept to its record. Absent or null: none. */
  lastmod?: string | null;
}

/** Longest `lastmod` a frontier accepts (an ISO 8601 date-time is 35 characters at most). */
export const MAX_LASTMOD_LENGTH = 64;

/** A task leased to the scheduler. Acks and retries name the lease, so a stale one is ignored. */
export interface Lease extends NewTask {
  taskId: string;
  leaseId: string;
  /** The fetch attempt this lease is for: 1 first, then 2, 3 after retries. */
  attempt: number;
  lastError: string | null;
}

/** Longest ETag or Last-Modified value kept for conditional requests (longer ones are not kept). */
export const MAX_VALIDATOR_LENGTH = 1024;
