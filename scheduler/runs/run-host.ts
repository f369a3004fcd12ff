import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import type { RunCounters, RunStall } from '../../shared/ports/sql-store.js';

/**
 * What a scheduler offers the control plane: many runs at once (issue 9, point 2). The master's
 * commands (start, pause, resume, cancel, new settings) arrive through this interface, and the
 * scheduler's counters and finished runs flow back through `reports()` and `onRunFinished`.
 * Run control is durable in the frontier; what lives here is the scheduler's view of it.
 */

/** One run to host: which job it executes and with which settings. */
export interface RunSpec {
  runId: string;
  jobId: string;
  settings: CrawlSettings;
}

export type HostedRunState = 'active' | 'paused' | 'cancelled' | 'finished';

/** A hosted run as the scheduler sees it now. */
export interface RunReport {
  runId: string;
  jobId: string;
  state: HostedRunState;
  counters: RunCounters;
}

/** A run that came to its end on its own (a cancelled run does not finish: it was cancelled). */
export interface RunFinished {
  runId: string;
  jobId: string;
  outcome: 'succeeded' | 'failed';
  /** Why a failed run could not proceed; null when it succeeded. */
  error: string | null;
  counters: RunCounters;
}

export interface RunHost {
  /** Idempotent: a run already hosted keeps going (a restart re-adds every open run); its seeds are pushed once (the frontier's per-run seen-set dedups). */
  startRun(spec: RunSpec): Promise<void>;
  /** Dispatch of the run stops at once: tasks buffered for it are released (no attempt counted); tasks in flight finish. Durable in the frontier. */
  pauseRun(runId: string): Promise<void>;
  resumeRun(runId: string): Promise<void>;
  /** Removes its queued work (frontier.cancelRun), stops dispatching it, resolves with how many tasks were removed. */
  cancelRun(runId: string): Promise<number>;
  /** New settings for a hosted run (limits, politeness, …) take effect for tasks dispatched from now. */
  updateRun(runId: string, settings: CrawlSettings): Promise<void>;
  /**
   * Puts a URL that failed for good in a hosted run back into its frontier as a fresh task (a
   * person asked for a retry): true when queued, false when it was not failed there (queued
   * already, or done), null when this scheduler's frontier cannot (it lacks Frontier.requeue).
   */
  requeue(runId: string, url: string): Promise<boolean | null>;
  /**
   * A run that finished or was cancelled here and whose end SQL now holds (it is never re-opened)
   * is no longer hosted: its counters are not read at every tick, its politeness and robots policy
   * no longer bind the runs that follow, and it leaves `reports()`; the frontier retires a finished
   * one (Frontier.retireRun: no more consumers or counting of its queues; a cancelled run's queues
   * went with the cancel). Outcomes of its tasks still in flight are settled as for any run not
   * hosted: recorded, their links not followed. A run neither finished nor cancelled here, and the
   * single crawl's run (`GET /crawl` reports on it), are kept (false).
   */
  forgetRun(runId: string): boolean;
  reports(): RunReport[];
  /**
   * Why this scheduler can make no outcome durable now, and since when (every run it serves waits
   * on it alike); undefined when it can. Reported with the counters (runs.stall in SQL).
   */
  stall?(): RunStall | undefined;
  onRunFinished(listener: (finished: RunFinished) => void): void;
}
