import type { Lease, NewTask } from '../protocol/task.js';

/**
 * The frontier: every URL a crawl accepted, until its outcome is settled. Semantics follow a broker
 * with manual acks: a task is leased, then settled (acked, retried or failed) by naming its lease.
 * A lease that expires, or that is released, puts the task back. Settling a stale lease (one that
 * expired and was leased again) is ignored, never applied twice.
 *
 * Every task belongs to a run (`NewTask.runId`). One frontier serves many runs at once: each has
 * its own seen-set (the same URL in two runs is two tasks), its own `maxTotal`, its own counters
 * and its own control state (active, paused, cancelled), which is durable: it survives a restart
 * of the frontier's process. A run exists from its first push or control call.
 */
export interface Frontier {
  /**
   * Durably accept tasks whose URL was never accepted before in their run (the frontier is also
   * each run's seen-set). With `maxTotal`, a run stops accepting once that many of its URLs were
   * ever accepted. Tasks of a cancelled run are not accepted. Resolves with the tasks accepted,
   * once they are durable.
   */
  push(tasks: readonly NewTask[], options?: PushOptions): Promise<NewTask[]>;

  /**
   * Lease up to `max` ready tasks of active runs, higher priority levels first without starving
   * the lower ones (every level keeps a guaranteed share, see level-picker.ts), oldest first within
   * a level. Tasks of paused or cancelled runs are never leased. Tasks on `excludeHosts` are
   * skipped. Each lease lasts `leaseMs` unless settled or released first.
   */
  lease(max: number, options?: LeaseOptions): Promise<Lease[]>;

  /**
   * Apply a batch of outcomes in one durable step (all or nothing). Outcomes of a cancelled run's
   * leases are applied as far as they finish the task (an ack is done, a failure failed), but
   * their discovered tasks are not accepted and a retry or release drops the task instead of
   * queueing it again.
   */
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
   * Optional. What the frontier knows of one URL (normalised) of a run, or null if the run never
   * accepted it: for "why not yet?" answers. Adapters that cannot look a URL up may omit it.
   */
  inspect?(runId: string, url: string): Promise<TaskView | null>;

  /**
   * Optional. Puts a URL that failed for good in its run back as a fresh task (attempt 1, ready at
   * once), past the run's seen-set, for one more go (a person asked: POST …/failures/{id}/retry).
   * Resolves true once it is durably queued; false when the URL is not failed in the run (never
   * accepted, queued, in flight or done: nothing to do) or the run is cancelled, so a second
   * call for the same failure queues nothing. Adapters that cannot do it omit it.
   */
  requeue?(runId: string, url: string): Promise<boolean>;

  /**
   * Optional. Whether this process has crawlers to give work to. False: a frontier that prefetches
   * from a broker stops taking deliveries and hands back what it holds (no lease is cut short), so
   * another scheduler's crawlers get that work; true takes deliveries again. Leasing still works
   * either way, from what is held. Starts true. Adapters that hold nothing ahead of `lease` omit it.
   */
  setDemand?(wanted: boolean): Promise<void>;

  /**
   * Optional. The crawler capacity this process serves: requests its connected crawlers run at
   * once. A frontier that splits hosts among schedulers gives each a share of the hosts in
   * proportion to it. Adapters that do not split hosts omit it.
   */
  setCapacity?(slots: number): void;

  /**
   * Optional. Hosts split among schedulers: `listener` is told whenever this frontier starts handing
   * out the tasks of hosts another scheduler paced until now (`taken(host)` says which), so the
   * scheduler can keep their delay across the move. Adapters that do not split hosts omit it.
   */
  onHostsTaken?(listener: (taken: (host: string) => boolean) => void): void;

  /**
   * Optional. Hosts split among schedulers: true while this process paces `host`, that is while it
   * consumes the host's tasks, or gave them up and still has requests to the host out. A scheduler
   * sends no request of its own (a robots.txt fetch) to a host it does not pace: another scheduler
   * paces it. Adapters that do not split hosts omit it (this process paces every host).
   */
  pacesHost?(host: string): boolean;

  /**
   * Optional. Hosts split among schedulers: `count(hosts)` says how many requests this process has
   * out, besides its leases, to hosts `hosts` accepts (robots.txt fetches). Hosts given up stay
   * announced as paced here while any is out, as they do while their leases are out, so no other
   * scheduler starts a request to them meanwhile. Adapters that do not split hosts omit it.
   */
  countRequestsOut?(count: (hosts: (host: string) => boolean) => number): void;

  /**
   * Optional. True while the broker blocks this process's publishing (a RabbitMQ resource alarm: its
   * disk or memory limit). Settles wait meanwhile, acknowledging nothing, and go on by themselves
   * once it clears; an operator must free the broker's disk or memory. Adapters without a broker omit it.
   */
  publishBlocked?(): boolean;

  /** Counters of one run, or of every run together when `runId` is omitted. */
  stats(runId?: string): Promise<FrontierStats>;

  /**
   * Stops leasing the run's tasks, at once and durably. Its queued work stays where it is,
   * untouched (a broker adapter stops consuming it: no redelivery loop while paused); its
   * current leases live on and settle as usual. Pausing a paused run does nothing; a cancelled
   * run cannot be paused (FRONTIER_RUN_CANCELLED).
   */
  pauseRun(runId: string): Promise<void>;

  /** Leases the run's tasks again. Resuming an active run does nothing; a cancelled one throws FRONTIER_RUN_CANCELLED. */
  resumeRun(runId: string): Promise<void>;

  /**
   * Cancels the run for good: its queued and delayed work is removed and it accepts nothing more.
   * Resolves with how many tasks were removed (0 when already cancelled). Leases still out settle
   * as `settle` describes; they are not counted here.
   */
  cancelRun(runId: string): Promise<number>;

  /**
   * Optional. The run is over and its end is recorded where the fleet reads it (SQL): this
   * frontier stops serving it. A broker adapter stops consuming, declaring and counting its queues,
   * and deletes them once it finds them empty with no consumer (another scheduler still
   * consuming them deletes them when it retires the run). Its counters stay readable in
   * `stats(runId)`; `stats()` of every run leaves it out.
   * Work still queued for it is never deleted; a task of it that comes back goes to the failed
   * queue. A cancelled run's queues go with whatever they hold (the cancel removed its work
   * already); its URL rows go once no lease of it is out. The SQLite frontier deletes the run's
   * tasks the same way, once none is leased, in the process that owns the file. A retired run
   * takes no more tasks. Durable, idempotent; an unknown run is left as it is. Adapters with
   * nothing to let go of omit it.
   */
  retireRun?(runId: string): Promise<void>;

  /**
   * Every run this frontier knows (it has tasks, or a control call named it) and has not retired,
   * with its state.
   */
  runs(): Promise<RunControl[]>;

  /** The checkpoint stored with the last settle (see Settlement.checkpoint), or null. */
  checkpoint(): Promise<string | null>;

  close(): Promise<void>;
}

/** A run's control state. */
export type RunState = 'active' | 'paused' | 'cancelled';

export interface RunControl {
  runId: string;
  state: RunState;
}

/**
 * A run's `maxTotal`: how many URLs it may ever accept, or undefined (or 0) for no limit. Asked
 * per run, at the time of the call, so a raised limit takes effect on the next push or settle.
 */
export type RunLimit = (runId: string) => number | undefined;

export interface PushOptions {
  maxTotal?: RunLimit;
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
  /** Limit for discovered tasks, per run, as PushOptions.maxTotal. */
  maxTotal?: RunLimit;
  /** Opaque position in the page sink, stored atomically with this settlement. */
  checkpoint?: string;
}

export interface SettleResult {
  /** Settlements applied; stale leases are left out. */
  applied: number;
  /** Discovered tasks newly accepted. */
  accepted: number;
  /**
   * True when `maxTotal` kept out a discovered URL its run did not already have: it was refused,
   * not seen, and a run given a higher cap later must still be able to queue it. Absent
   * (or false) when every discovered URL of the applied settlements was accepted or already known.
   */
  capped?: boolean;
}

/** Counts of one run, or of all runs together. */
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
  /** Tasks a cancel removed (queued or delayed when their run was cancelled, or dropped after). */
  cancelled: number;
}

/** The counters of a frontier (or run) with nothing in it. */
export const EMPTY_FRONTIER_STATS: Readonly<FrontierStats> = Object.freeze({
  ready: 0,
  delayed: 0,
  leased: 0,
  done: 0,
  failed: 0,
  total: 0,
  cancelled: 0,
});

export interface TaskView {
  url: string;
  runId: string;
  /**
   * `queued`: waiting its turn; `delayed`: a retry not yet due; `pending`: in the broker, place
   * unknown; `cancelled`: its run was cancelled before it finished.
   */
  state: 'queued' | 'delayed' | 'pending' | 'leased' | 'done' | 'failed' | 'cancelled';
  attempt: number;
  lastError: string | null;
  /** When a delayed task becomes ready (ms since the epoch), when known. */
  availableAt: number | null;
  depth: number | null;
  parentUrl: string | null;
}
