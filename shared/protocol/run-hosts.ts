import type { HostPolitenessView } from './why.js';

/**
 * A run's busiest hosts and their politeness right now (`GET /hosts?runId=…&limit=…` on the
 * scheduler, `GET /api/v1/runs/{id}/hosts` on the master). Times are ISO strings.
 */
/** The host's politeness (its `inFlight` counts every run's requests: what `concurrency` limits), and this run's share. */
export interface RunHostState extends HostPolitenessView {
  /** Tasks of this run the scheduler holds for the host, waiting for a crawler (the frontier keeps no per-host count). */
  queued: number;
  /** Outcomes of this run's tasks of the host while it was among the run's recent hosts (a bounded list). */
  fetched: number;
  /** When an outcome of this run's tasks of the host last came in; null: none lately. */
  lastActiveAt: string | null;
}

export interface RunHostsAnswer {
  runId: string;
  /** When the scheduler looked. */
  at: string;
  /** Busiest first: in flight, then queued, then recently active, then cooling down. */
  items: RunHostState[];
  /** Why the list is empty or partial, for a person; null when there is nothing to say. */
  note: string | null;
}

/** Hosts answered at most, and by default. */
export const RUN_HOSTS_MAX_LIMIT = 100;
export const RUN_HOSTS_DEFAULT_LIMIT = 20;
