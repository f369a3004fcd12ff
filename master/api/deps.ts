import type { HostPolicy } from '../../shared/http/request-guards.js';
import type { Registry } from '../../shared/metrics/registry.js';
import type { Logger } from '../../shared/logger.js';
import type { RunControl } from '../../shared/ports/run-control.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import type { RunHostsAnswer } from '../../shared/protocol/run-hosts.js';
import type { RuleStatus } from '../alerts/engine.js';
import type { Deliverer } from '../webhooks/deliverer.js';
import type { CronEngine } from '../schedules/cron-engine.js';
import type { LiveSampler } from '../dashboard/live-sampler.js';

/** "Why not yet?" for a URL of a run, asked of a scheduler (master/adapters/scheduler-why.ts). */
export interface SchedulerWhy {
  /** Rejects NO_SCHEDULER (503) when no scheduler can be asked. */
  explain(query: { runId: string; schedulerId: string | null; url: string }): Promise<WhyAnswer>;
}

/** A run's busiest hosts, asked of the scheduler that hosts it (master/adapters/scheduler-hosts.ts). */
export interface SchedulerHosts {
  /** Null when no scheduler that answered hosts the run; rejects NO_SCHEDULER (503) when none answered. */
  top(query: { runId: string; limit: number }): Promise<RunHostsAnswer | null>;
}

export interface MasterApiOptions {
  /** Which Host headers are answered (DNS rebinding). */
  hosts: HostPolicy;
  /** A run stored `running` whose scheduler has not reported for longer is shown `queued`. */
  staleAfterMs: number;
  /** Largest request body read (413 above). */
  maxBodyBytes: number;
  /** An agent not heard from for longer is shown `lost` (default 10 s; docs/fleet.md). */
  agentLostAfterMs?: number;
  /** How often agents are asked to send a heartbeat (default 2 s). */
  agentHeartbeatMs?: number;
}

/** The fleet's side of the master: the agent credential and a way to tell an agent to look now. */
export interface FleetDeps {
  /** SHA-256 (hex) of the agent credential; agents' routes refuse every caller without it. */
  agentTokenHash: string;
  /**
   * Asks the agent at `url` to send a heartbeat now, so that a change takes effect at once rather
   * than at its next heartbeat. Best effort: a failure is only logged (the heartbeat carries it).
   */
  nudge(url: string): void;
}

/** Everything the master's API uses, passed in so that tests drive it (no listen(), no env). */
export interface MasterAppDeps {
  store: SqlStore;
  runControl: RunControl;
  why: SchedulerWhy;
  hosts: SchedulerHosts;
  /** Validates schedules and lists their next fire times (master/schedules/cron-engine.ts). */
  cron: CronEngine;
  /** Called after a schedule is set, paused, resumed or removed (the master's loop reads it again). */
  onScheduleChange?: () => void;
  clock: { now(): number };
  newId: () => string;
  logger: Logger;
  options: MasterApiOptions;
  /** Absent: the agents' routes answer 401 (no agent credential is set up). */
  fleet?: FleetDeps;
  alerting: AlertingDeps;
  /**
   * The process's metrics, served at `GET /metrics` (outside /api/v1, where Prometheus looks) to a
   * token with the read scope. Absent: no such route.
   */
  metrics?: Registry;
  /**
   * The web dashboard (docs/dashboard.md): its files at /ui/ and the live stream at /api/v1/live.
   * Absent: neither is served.
   */
  dashboard?: { live: LiveSampler; assetsDir?: string };
}

/** What the alert and webhook routes use besides the store (master/alerts, master/webhooks). */
export interface AlertingDeps {
  /** Sends one attempt of a delivery (the test call uses it). */
  deliverer: Deliverer;
  /** The engine's last pass over a rule, in this process. */
  status(ruleId: string): RuleStatus | null;
  /** Webhook URLs may name private and loopback addresses (ACKCRAWL_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateWebhooks: boolean;
}
