import { AppError } from '../../shared/errors.js';
import type { CrawlSettings } from '../../shared/crawl-settings/index.js';
import type { Logger } from '../../shared/logger.js';
import type { Frontier, RunControl as FrontierRunControl } from '../../shared/ports/frontier.js';
import type { FetchSettings } from '../../shared/protocol/messages.js';
import { DEFAULT_RUN_ID, type Lease } from '../../shared/protocol/task.js';
import { hostOfNormalized } from '../../shared/url/host-of-normalized.js';
import { HostedRun } from './hosted-run.js';
import type { RunRegistry } from './run-registry.js';
import { finishVerdict } from './run-finish.js';
import type { RunFinished, RunHost, RunReport, RunSpec } from './run-host.js';
import type { SessionFlusher } from './session-flusher.js';

export interface RunControlDeps {
  registry: RunRegistry;
  frontier: Frontier;
  /** What of the dispatcher run control needs. */
  dispatcher: {
    frontierChanged(): void;
    releaseBuffered(test: (lease: Lease) => boolean): Promise<number>;
    inFlightByRun(): Map<string, number>;
  };
  /** The shared parts follow the runs (politeness, robots policy, render rules). */
  runsChanged: () => void;
  limitFetch: (fetch: FetchSettings) => FetchSettings;
  /** Where the runs' sessions are kept across restarts (absent: in memory only). */
  sessions?: Pick<SessionFlusher, 'saved' | 'forget'>;
  clock: () => number;
  logger: Logger;
}

/**
 * The RunHost side of a scheduler: starting, pausing, resuming, cancelling and re-configuring the
 * runs it hosts (control is made durable in the frontier first), their reports, and the detection
 * of runs that finished.
 */
export class RunControl implements Omit<RunHost, 'requeue'> {
  private readonly listeners: ((finished: RunFinished) => void)[] = [];
  /** Runs being started: a second startRun of one waits for the first instead of starting it twice. */
  private readonly starting = new Map<string, Promise<void>>();

  constructor(private readonly deps: RunControlDeps) {}

  startRun(spec: RunSpec): Promise<void> {
    if (this.deps.registry.get(spec.runId)) return Promise.resolve();
    let started = this.starting.get(spec.runId);
    if (!started) {
      started = this.start(spec).finally(() => this.starting.delete(spec.runId));
      this.starting.set(spec.runId, started);
    }
    return started;
  }

  private async start(spec: RunSpec): Promise<void> {
    const { registry, frontier, dispatcher, logger } = this.deps;
    const control = (await frontier.runs()).find((r) => r.runId === spec.runId);
    const { sessions } = this.deps;
    const run = new HostedRun(
      spec,
      this.deps.clock,
      this.deps.limitFetch,
      sessions ? (runId) => sessions.saved(runId) : undefined,
    );
    run.state = hostedStateOf(control);
    registry.add(run);
    this.deps.runsChanged();
    if (run.state !== 'cancelled') {
      const accepted = await frontier.push(run.seedTasks(hostOfNormalized), { maxTotal: registry.maxTotal });
      logger.info(
        { runId: run.runId, jobId: run.jobId, seeds: spec.settings.seeds.length, accepted: accepted.length },
        'run started',
      );
    }
    run.started = true;
    dispatcher.frontierChanged();
  }

  async pauseRun(runId: string): Promise<void> {
    const run = this.deps.registry.get(runId);
    const before = run?.state;
    // Dispatch stops at once: a refill under way hands this run's leases back (dispatchable).
    if (run && run.state !== 'cancelled') run.state = 'paused';
    try {
      await this.deps.frontier.pauseRun(runId);
    } catch (err) {
      if (run && before !== undefined) run.state = before;
      throw err;
    }
    const released = await this.deps.dispatcher.releaseBuffered((lease) => lease.runId === runId);
    this.deps.logger.info({ runId, released }, 'run paused');
  }

  async resumeRun(runId: string): Promise<void> {
    await this.deps.frontier.resumeRun(runId);
    const run = this.deps.registry.get(runId);
    if (run && run.state === 'paused') run.state = 'active';
    this.deps.logger.info({ runId }, 'run resumed');
    this.deps.dispatcher.frontierChanged();
  }

  async cancelRun(runId: string): Promise<number> {
    const run = this.deps.registry.get(runId);
    if (run) run.state = 'cancelled';
    this.deps.runsChanged();
    // Buffered tasks go back first, so that the cancel removes (and counts) them with the rest.
    const released = await this.deps.dispatcher.releaseBuffered((lease) => lease.runId === runId);
    const removed = await this.deps.frontier.cancelRun(runId);
    this.deps.sessions?.forget(runId);
    this.deps.logger.info({ runId, removed, released }, 'run cancelled');
    return removed;
  }

  updateRun(runId: string, settings: CrawlSettings): Promise<void> {
    const run = this.deps.registry.get(runId);
    if (!run) return Promise.reject(runNotHosted(runId));
    const hadSession = run.cookies !== null;
    run.update(settings);
    if (hadSession && run.cookies === null) this.deps.sessions?.forget(runId);
    this.deps.runsChanged();
    this.deps.dispatcher.frontierChanged();
    return Promise.resolve();
  }

  forgetRun(runId: string): boolean {
    const run = this.deps.registry.get(runId);
    // The single crawl's run is what `GET /crawl` reports on: never let go.
    if ((run?.state !== 'finished' && run?.state !== 'cancelled') || runId === DEFAULT_RUN_ID) return false;
    this.deps.registry.remove(runId);
    this.deps.runsChanged();
    this.deps.sessions?.forget(runId);
    this.deps.logger.info({ runId }, 'run no longer hosted: its end is recorded');
    // The frontier lets go of it too (durably first: a failure here is tried again at the next
    // start, see RunSync). Its outcome is logged, never awaited: letting go is bookkeeping.
    this.deps.frontier.retireRun?.(runId).catch((err: unknown) => {
      this.deps.logger.warn(
        { err, runId },
        'could not retire a finished run in the frontier; tried again at the next start',
      );
    });
    return true;
  }

  reports(): RunReport[] {
    const inFlight = this.deps.dispatcher.inFlightByRun();
    return this.deps.registry.all().map((run) => run.report(inFlight.get(run.runId) ?? 0));
  }

  onRunFinished(listener: (finished: RunFinished) => void): void {
    this.listeners.push(listener);
  }

  /**
   * After the runs' counters were read: a run with nothing left is finished (said once); one that
   * gets work again (new seeds) is active again. Returns the runs that finished now.
   */
  checkFinished(): RunFinished[] {
    const now: RunFinished[] = [];
    for (const run of this.deps.registry.all()) {
      if (!run.started || !run.statsAfterStart) continue;
      if (run.state !== 'active' && run.state !== 'finished') continue;
      const verdict = finishVerdict(run.stats);
      if (!verdict.finished) {
        if (run.state === 'finished') run.state = 'active';
        continue;
      }
      if (run.state === 'finished') continue;
      run.state = 'finished';
      const finished: RunFinished = {
        runId: run.runId,
        jobId: run.jobId,
        outcome: verdict.outcome,
        error: verdict.outcome === 'failed' ? verdict.error : null,
        counters: run.counters(0),
      };
      this.deps.logger.info(
        { runId: run.runId, outcome: finished.outcome, error: finished.error, counters: finished.counters },
        'run finished',
      );
      for (const listener of this.listeners) listener(finished);
      now.push(finished);
    }
    return now;
  }
}

/** A run's state as the frontier keeps it durably (a restart re-adds a paused run paused). */
function hostedStateOf(control: FrontierRunControl | undefined): HostedRun['state'] {
  if (control?.state === 'paused') return 'paused';
  if (control?.state === 'cancelled') return 'cancelled';
  return 'active';
}

export function runNotHosted(runId: string): AppError {
  return new AppError(
    'RUN_NOT_HOSTED',
    `no run ${JSON.stringify(runId.slice(0, 64))} is hosted by this scheduler`,
  );
}
