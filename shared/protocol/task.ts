/** A URL the frontier accepted, before it is leased. `url` is normalised; `host` is its host. */
export interface NewTask {
  url: string;
  host: string;
  depth: number;
  priority: number;
  parentUrl: string | null;
}

/** A task leased to the scheduler. Acks and retries name the lease, so a stale one is ignored. */
export interface Lease extends NewTask {
  taskId: string;
  leaseId: string;
  /** The fetch attempt this lease is for: 1 first, then 2, 3 after retries. */
  attempt: number;
  lastError: string | null;
}
