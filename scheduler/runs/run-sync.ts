import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { RunControl, RunControlSubscription } from '../../shared/ports/run-control.js';
import type { RunRow, SqlStore } from '../../shared/ports/sql-store.js';
import type { Frontier } from '../../shared/ports/frontier.js';
import type { RunFinished, RunHost } from './run-host.js';
import { isOpen, OPEN_RUN_STATES, planSync, type HostedRun, type SyncAction } from './sync-plan.js';

export interface RunSyncDeps {
  store: SqlStore;
  control: RunControl;
  host: RunHost;
  /** Who this scheduler is in SQL (`runs.schedulerId`); stable across its restarts. */
  schedulerId: string;
  logger: Logger;
  clock?: () => number;
  /**
   * The frontier's own list of runs: at start, a run that SQL holds cancelled but the frontier
   * does not (cancelled while no scheduler ran) is cancelled there, so its queued work goes; one
   * SQL holds ended is retired there.
   */
  frontier?: Pick<Frontier, 'runs' | 'cancelRun' | 'retireRun'>;
  /** How often SQL is read even without a command (commands only wake the sync). Default 3 s. */
  syncIntervalMs?: number;
  /** How often counters and the heartbeat of served runs go to SQL. Default 1 s. */
  reportIntervalMs?: number;
}

const PAGE = 500;

/**
 * Keeps one scheduler serving what SQL says. SQL is the source of truth; a run command only wakes
 * the sync early, so a command lost on the way costs latency, never a state. Each sync hosts every
 * open run (`queued`, `running`, `paused`), claims queued ones (`queued` → `running`), follows
 * pause and resume, hands on new settings, and cancels on the host what SQL holds cancelled. Every
 * report interval it writes the counters and heartbeat of the runs it serves, so a run whose
 * scheduler died goes quiet and the master stops showing it running. When the host finishes a
 * run, its end is recorded (`running` → `succeeded` / `failed`).
 *
 * Several schedulers may sync against one store: every state change is a compare-and-set from the
 * states this scheduler expects, so whichever comes second finds the change made and goes on.
 */
export class RunSync {
  private readonly clock: () => number;
  /** What the host was given, by run (the host's own state comes from its reports). */
  private readonly given = new Map<string, string>();
  /** Ends the host announced that are not yet in SQL (the store was down, or the run paused). */
  private readonly unrecorded = new Map<string, RunFinished>();
  /** Last stored state seen of each hosted run. */
  private readonly stored = new Map<string, RunRow['state']>();
  private subscription: RunControlSubscription | null = null;
  private timers: NodeJS.Timeout[] = [];
  private syncing: Promise<void> | null = null;
  private again = false;
  private reporting: Promise<void> | null = null;
  private closed = false;
  private lastErrorAt = 0;

  constructor(private readonly deps: RunSyncDeps) {
    this.clock = deps.clock ?? Date.now;
    deps.host.onRunFinished((finished) => {
      this.unrecorded.set(finished.runId, finished);
      void this.recordEnd(finished).catch((err: unknown) => this.failed(err, 'recording a run end'));
    });
  }

  /** Subscribes to run commands and syncs once (resolves after that first sync). */
  async start(): Promise<void> {
    await this.subscribe();
    await this.catchUpEnded().catch((err: unknown) =>
      this.failed(err, 'catching up with runs ended meanwhile'),
    );
    await this.wake();
    this.timers.push(
      setInterval(() => {
        if (this.subscription === null) void this.subscribe();
        void this.wake();
      }, this.deps.syncIntervalMs ?? 3_000),
    );
    this.timers.push(setInterval(() => void this.report(), this.deps.reportIntervalMs ?? 1_000));
  }

  /**
   * Runs SQL ended while this scheduler did not serve them (it was down, or stopped before it let
   * go of them): one cancelled there is cancelled in the frontier too, so its queued work goes;
   * then each is retired there (Frontier.retireRun), so its rows go.
   */
  private async catchUpEnded(): Promise<void> {
    const { frontier, store, logger } = this.deps;
    if (!frontier) return;
    for (const { runId, state } of await frontier.runs()) {
      // Runs SQL does not know (the single crawl of `ackcrawl crawl`) are not the master's to end.
      const row = await store.runs.get(runId);
      if (row === null || isOpen(row.state)) continue;
      if (row.state === 'cancelled' && state !== 'cancelled') {
        const removed = await frontier.cancelRun(runId);
        logger.info(
          { runId, removed },
          'run cancelled while no scheduler served it: its queued work removed',
        );
      }
      if (frontier.retireRun) {
        await frontier.retireRun(runId);
        logger.info({ runId, state: row.state }, 'run ended while this scheduler did not serve it: retired');
      }
    }
  }

  /** Commands only wake the sync early: without them (broker down), the periodic sync follows SQL. */
  private async subscribe(): Promise<void> {
    try {
      const subscription = await this.deps.control.subscribe(() => this.wake());
      if (this.closed) await subscription.close();
      else this.subscription = subscription;
    } catch (err) {
      this.failed(err, 'subscribing to run commands (following SQL by polling meanwhile)');
    }
  }

  /**
   * Syncs now (one sync at a time; a wake during a sync makes one more after it). Resolves once a
   * sync that started after the call is over; never rejects (failures are logged, the next wake
   * tries again).
   */
  wake(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        try {
          await this.syncOnce();
        } catch (err) {
          this.failed(err, 'run sync');
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    const { store } = this.deps;
    const open: RunRow[] = [];
    let after: string | null = null;
    do {
      const page = await store.runs.list({ states: OPEN_RUN_STATES, limit: PAGE, after });
      open.push(...page.items);
      after = page.next;
    } while (after !== null);
    const hosted = this.hosted();
    const openIds = new Set(open.map((row) => row.id));
    const closed = new Map<string, RunRow | null>();
    for (const [runId, held] of hosted) {
      if (openIds.has(runId) || held.state === 'finished' || held.state === 'cancelled') continue;
      closed.set(runId, await store.runs.get(runId));
    }
    for (const row of open) this.stored.set(row.id, row.state);
    for (const [runId, row] of closed) {
      if (row === null) this.stored.delete(runId);
      else this.stored.set(runId, row.state);
    }
    for (const action of planSync(open, closed, hosted)) {
      if (this.closed) return;
      try {
        await this.apply(action);
      } catch (err) {
        const runId = action.kind === 'start' || action.kind === 'update' ? action.row.id : action.runId;
        this.failed(err, `${action.kind} of run ${runId}`);
      }
    }
    await this.queueRetries(open);
    // Ends the host announced while SQL could not take them, or while the run was paused.
    for (const finished of [...this.unrecorded.values()]) {
      if (this.stored.get(finished.runId) === 'running') await this.recordEnd(finished);
    }
  }

  /**
   * Final failures a person sent back to an open run this scheduler hosts (marked in SQL by
   * POST …/failures/{id}/retry): each URL goes back into the frontier, then the mark says so. A
   * crash in between queues it again at the next sync, which finds it queued or done already.
   */
  private async queueRetries(open: readonly RunRow[]): Promise<void> {
    const { store, host, logger } = this.deps;
    const hosted = new Set(
      host
        .reports()
        .filter((r) => r.state !== 'cancelled')
        .map((r) => r.runId),
    );
    for (const row of open) {
      if (this.closed || !hosted.has(row.id)) continue;
      for (const retry of await store.logs.retriesToQueue(row.id, PAGE)) {
        const queued = await host.requeue(row.id, retry.url);
        if (queued === null) {
          this.failed(
            new Error('this frontier cannot put a failed URL back (no requeue)'),
            `retry of failure ${retry.id} of run ${row.id}`,
          );
          return;
        }
        await store.logs.markRequeued(retry.id, this.clock());
        logger.info(
          { runId: row.id, url: retry.url, failureId: retry.id, queued },
          queued
            ? 'failure sent back: its URL is queued again'
            : 'failure sent back: its URL was queued or done already',
        );
      }
    }
  }

  /** The host's runs, with what each was given. */
  private hosted(): Map<string, HostedRun> {
    const hosted = new Map<string, HostedRun>();
    for (const report of this.deps.host.reports()) {
      hosted.set(report.runId, { state: report.state, settingsJson: this.given.get(report.runId) ?? '' });
    }
    return hosted;
  }

  private async apply(action: SyncAction): Promise<void> {
    const { host, logger } = this.deps;
    switch (action.kind) {
      case 'start':
        return this.startRun(action.row);
      case 'pause':
        logger.info({ runId: action.runId }, 'pausing run');
        return host.pauseRun(action.runId);
      case 'resume':
        logger.info({ runId: action.runId }, 'resuming run');
        return host.resumeRun(action.runId);
      case 'cancel':
        logger.info({ runId: action.runId }, 'cancelling run');
        await host.cancelRun(action.runId);
        // SQL holds it cancelled, which nothing re-opens: the host lets it go, or every run ever
        // cancelled would stay in its reports and its sync's maps until the scheduler restarts.
        this.forget(action.runId);
        return;
      case 'update': {
        const settings = parseCrawlSettings(action.row.settings);
        logger.info({ runId: action.row.id }, 'new settings for run');
        await host.updateRun(action.row.id, settings);
        this.given.set(action.row.id, JSON.stringify(action.row.settings));
        return;
      }
    }
  }

  /** Claims a queued run, then hosts it (paused if it is). Settings that do not parse fail the run. */
  private async startRun(found: RunRow): Promise<void> {
    const { store, host, schedulerId, logger } = this.deps;
    let settings;
    try {
      settings = parseCrawlSettings(found.settings);
    } catch (err) {
      const failed = await store.runs.transition(found.id, OPEN_RUN_STATES, 'failed', {
        endedAt: this.clock(),
        error: `its settings are invalid: ${errorMessage(err)}`,
      });
      if (failed) logger.error({ runId: found.id, err }, 'run failed: invalid settings');
      return;
    }
    let row: RunRow | null = found;
    if (found.state === 'queued') {
      const now = this.clock();
      row =
        (await store.runs.transition(found.id, ['queued'], 'running', {
          schedulerId,
          startedAt: now,
          heartbeatAt: now,
        })) ?? (await store.runs.get(found.id));
      // Another scheduler claimed it (then it is running: serve it too), or it was cancelled.
      if (row === null || !isOpen(row.state)) return;
    }
    this.stored.set(row.id, row.state);
    logger.info({ runId: row.id, jobId: row.jobId, state: row.state }, 'hosting run');
    await host.startRun({ runId: row.id, jobId: row.jobId, settings });
    this.given.set(row.id, JSON.stringify(row.settings));
    if (row.state === 'paused') await host.pauseRun(row.id);
  }

  /**
   * Records a run's end: its last counters, then `running` → `succeeded` / `failed`. A run that is
   * no longer `running` keeps its stored state (cancelled, or ended by another scheduler); one that
   * is paused is recorded when resumed.
   */
  private async recordEnd(finished: RunFinished): Promise<void> {
    const { store, schedulerId, logger } = this.deps;
    const now = this.clock();
    await store.runs.report([{ id: finished.runId, schedulerId, counters: finished.counters, at: now }]);
    const ended = await store.runs.transition(finished.runId, ['running'], finished.outcome, {
      endedAt: now,
      error: finished.error,
    });
    if (ended) {
      this.unrecorded.delete(finished.runId);
      this.stored.set(finished.runId, ended.state);
      logger.info(
        { runId: finished.runId, outcome: finished.outcome, counters: finished.counters },
        'run ended',
      );
      this.forget(finished.runId);
      return;
    }
    const row = await store.runs.get(finished.runId);
    this.stored.set(finished.runId, row?.state ?? 'cancelled');
    if (row === null || !isOpen(row.state)) this.unrecorded.delete(finished.runId);
    // Ended in SQL already (another scheduler recorded it). A run SQL does not know (the single
    // crawl of `ackcrawl crawl --cluster`, whose end its CLI reads from this scheduler) is kept.
    if (row !== null && !isOpen(row.state)) this.forget(finished.runId);
  }

  /** A run whose end SQL holds: the host lets it go, and so does this sync. */
  private forget(runId: string): void {
    if (!this.deps.host.forgetRun(runId)) return;
    this.given.delete(runId);
    this.stored.delete(runId);
  }

  /** Counters and heartbeat of every run this scheduler serves (open in SQL as last read). */
  report(): Promise<void> {
    if (this.reporting || this.closed) return this.reporting ?? Promise.resolve();
    this.reporting = (async () => {
      const at = this.clock();
      // One stall for every run: they all wait on this scheduler's commits.
      const stall = this.deps.host.stall?.();
      const rows = this.deps.host
        .reports()
        .filter(
          (r) =>
            (r.state === 'active' || r.state === 'paused') && isOpen(this.stored.get(r.runId) ?? 'cancelled'),
        )
        .map((r) => ({
          id: r.runId,
          schedulerId: this.deps.schedulerId,
          counters: r.counters,
          at,
          ...(stall ? { stall } : {}),
        }));
      if (rows.length > 0) await this.deps.store.runs.report(rows);
    })()
      .catch((err: unknown) => this.failed(err, 'run report'))
      .finally(() => {
        this.reporting = null;
      });
    return this.reporting;
  }

  /** A store or host failure: said once per 10 s (an outage fails every sync the same way). */
  private failed(err: unknown, what: string): void {
    const now = this.clock();
    if (now - this.lastErrorAt < 10_000) return;
    this.lastErrorAt = now;
    this.deps.logger.error({ err, what }, 'run sync step failed; trying again at the next sync');
  }

  /** Stops syncing and reporting (the host is closed by its owner); safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.subscription?.close().catch(() => undefined);
    await this.syncing;
    await this.reporting;
  }
}
