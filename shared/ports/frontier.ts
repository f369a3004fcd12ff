import type { Lease, NewTask } from '../protocol/task.js';

/**
 * The frontier: every URL a crawl accepted, until its outcome is settled. Semantics follow a broker
 * with manual acks: a task is leased, then settled (acked, retried or failed) by naming its lease.
 * A lease that expires, or that is released, puts the task back. Settling a stale lease (one that
 * expired and was leased again) is ignored, never applied twice.
 */
export interface Frontier {
  /**
   * Durably accept tasks whose URL was never accepted before (the frontier is also the seen-set).
   * With `maxTotal`, stops accepting once that many URLs were ever accepted. Resolves with the
   * tasks accepted, once they are durable.
   */
  push(tasks: readonly NewTask[], options?: PushOptions): Promise<NewTask[]>;

  /**
   * Lease up to `max` ready tasks, highest priority first, then oldest first. Tasks on
   * `excludeHosts` are skipped. Each lease lasts `leaseMs` unless settled or released first.
   */
  lease(max: number, options?: LeaseOptions): Promise<Lease[]>;

  /** Apply a batch of outcomes in one durable step (all or nothing). */
  settle(batch: Settlement): Promise<SettleResult>;

  /** Put leased tasks back at once, without counting an attempt (their crawler went away). */
  release(leases: readonly Pick<Lease, 'taskId' | 'leaseId'>[]): Promise<void>;

  /** Extend leases still being worked on. */
  renew(leases: readonly Pick<Lease, 'taskId' | 'leaseId'>[], leaseMs: number): Promise<void>;

  /**
   * Optional. False when a lease is certainly dead and its task will be handed out again by the
   * frontier itself (a broker connection went away, or it expired and was taken back): work on it
   * would be wasted and its outcome ignored. Adapters whose leases only die by expiry may omit it.
   */
  isLeaseLive?(lease: Pick<Lease, 'taskId' | 'leaseId'>): boolean;

  /**
   * Optional. What the frontier knows of one URL (normalised), or null if it never accepted it:
   * for "why not yet?" answers. Adapters that cannot look a URL up may omit it.
   */
  inspect?(url: string): Promise<TaskView | null>;

  stats(): Promise<FrontierStats>;

  /** The checkpoint stored with the last settle (see Settlement.checkpoint), or null. */
  checkpoint(): Promise<string | null>;

  close(): Promise<void>;
}

export interface PushOptions {
  maxTotal?: number;
}

export interface LeaseOptions {
  excludeHosts?: readonly string[];
  leaseMs?: number;
  /**
   * How long, at least, tasks of an excluded host would wait before the caller could use them. An
   * adapter that must hold deliveries it cannot hand out (a broker's prefetch window) may set
   * such tasks aside for that long, so that one slow host never fills the window and blocks the
   * others. Setting aside never counts an attempt and never loses a task.
   */
  hostWaitMs?: (host: string) => number;
}

export interface Settlement {
  /** Outcome durable in the page sink: done. `discovered` are pushed in the same step. */
  acks: readonly { lease: Pick<Lease, 'taskId' | 'leaseId'>; discovered?: readonly NewTask[] }[];
  /** Try again after `delayMs` (0: at once), as attempt + 1. */
  retries: readonly { lease: Pick<Lease, 'taskId' | 'leaseId'>; delayMs: number; error: string }[];
  /**
   * Final failure, its record durable in the page sink. `discovered` (links of a page fetched
   * whole whose record could not be stored) are pushed in the same step, as an ack's are.
   */
  failures: readonly {
    lease: Pick<Lease, 'taskId' | 'leaseId'>;
    error: string;
    discovered?: readonly NewTask[];
  }[];
  /** Limit for discovered tasks, as PushOptions.maxTotal. */
  maxTotal?: number;
  /** Opaque position in the page sink, stored atomically with this settlement. */
  checkpoint?: string;
}

export interface SettleResult {
  /** Settlements applied; stale leases are left out. */
  applied: number;
  /** Discovered tasks newly accepted. */
  accepted: number;
  /**
   * True when `maxTotal` kept out a discovered URL the frontier did not already have: it was
   * refused, not seen, and a crawl given a higher cap later must still be able to queue it. Absent
   * (or false) when every discovered URL of the applied settlements was accepted or already known.
   */
  capped?: boolean;
}

export interface FrontierStats {
  /** Ready to lease now. */
  ready: number;
  /** Waiting for a retry delay. */
  delayed: number;
  leased: number;
  done: number;
  failed: number;
  /** Every URL ever accepted. */
  total: number;
}

export interface TaskView {
  url: string;
  /** `queued`: waiting its turn; `delayed`: a retry not yet due; `pending`: in the broker, place unknown. */
  state: 'queued' | 'delayed' | 'pending' | 'leased' | 'done' | 'failed';
  attempt: number;
  lastError: string | null;
  /** When a delayed task becomes ready (ms since the epoch), when known. */
  availableAt: number | null;
  depth: number | null;
  parentUrl: string | null;
}
