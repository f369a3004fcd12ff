/** What a task asks a crawler to do with its URL: fetch a page, or read a sitemap for more URLs. */
export type TaskKind = 'page' | 'sitemap';

/** A URL the frontier accepted, before it is leased. `url` is normalised; `host` is its host. */
export interface NewTask {
  url: string;
  host: string;
  depth: number;
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
