import type { RunLimit } from '../../shared/ports/frontier.js';
import { DEFAULT_JOB_ID } from '../../shared/protocol/page-record.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { RenderPredicate } from '../dispatch/render-rule.js';
import { DEFAULT_POLITENESS, type PolitenessSettings } from '../politeness/politeness-settings.js';
import type { RobotsPolicy } from '../robots/robots-guard.js';
import type { HostedRun } from './hosted-run.js';
import { strictestPoliteness, strictestRobotsPolicy } from './strictest-politeness.js';

/**
 * The runs a scheduler hosts, and what the parts it shares among them (one host gate, one robots
 * guard, one dispatcher, one settler) ask of them: the strictest politeness and robots policy of
 * the runs that dispatch, each task's run for its scope, render rules, retries and limit.
 */
export class RunRegistry {
  private readonly runs = new Map<string, HostedRun>();

  constructor(
    /** What applies while no run dispatches (the scheduler's configured crawl). */
    private readonly fallback: { politeness: PolitenessSettings; robots: RobotsPolicy },
  ) {}

  get(runId: string): HostedRun | undefined {
    return this.runs.get(runId);
  }

  add(run: HostedRun): void {
    this.runs.set(run.runId, run);
  }

  remove(runId: string): void {
    this.runs.delete(runId);
  }

  all(): HostedRun[] {
    return [...this.runs.values()];
  }

  /** Runs whose tasks go out: active ones (a finished run can get work again: new seeds). */
  dispatching(): HostedRun[] {
    return this.all().filter((run) => run.state === 'active' || run.state === 'finished');
  }

  /** True when a lease of this run may be dispatched now. */
  dispatchable(runId: string): boolean {
    const state = this.runs.get(runId)?.state;
    return state === 'active' || state === 'finished';
  }

  jobOf(runId: string): string {
    return this.runs.get(runId)?.jobId ?? DEFAULT_JOB_ID;
  }

  /** The frontier's per-run limit. */
  readonly maxTotal: RunLimit = (runId) => this.runs.get(runId)?.maxTotal;

  /**
   * The host gate's settings: the strictest of every hosted run that is not cancelled (a paused
   * run's hosts may still have its requests in flight, and it may resume at any time).
   */
  politeness(): PolitenessSettings {
    const live = this.all().filter((run) => run.state !== 'cancelled');
    return (
      strictestPoliteness(live.map((run) => ({ politeness: run.politeness, hosts: run.scopeHosts }))) ??
      this.fallback.politeness
    );
  }

  robots(): RobotsPolicy {
    const live = this.all().filter((run) => run.state !== 'cancelled');
    return strictestRobotsPolicy(live.map((run) => run.robots)) ?? this.fallback.robots;
  }

  /** Which leases need a browser (each its run's render rules), or null when no run renders. */
  renderPredicate(): RenderPredicate | null {
    if (!this.all().some((run) => run.needsRender !== null)) return null;
    return (lease: Lease) => this.runs.get(lease.runId)?.needsRender?.(lease) ?? false;
  }

  /** Tasks buffered per host: enough to keep the busiest run's concurrency busy, never a whole backlog. */
  perHostBuffer(): number {
    let most = DEFAULT_POLITENESS.concurrency;
    for (const run of this.runs.values()) {
      const { concurrency, hostRules } = run.politeness;
      most = hostRules.reduce(
        (max, rule) => Math.max(max, rule.concurrency ?? 0),
        Math.max(most, concurrency),
      );
    }
    return Math.max(16, most * 4);
  }
}
