import type { Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type { RunRow, SqlStore } from '../../shared/ports/sql-store.js';
import { agentView } from '../api/schemas/agent.js';
import { alertView } from '../api/schemas/alert.js';
import { runView } from '../api/run-view.js';
import { DEFAULT_AGENT_LOST_AFTER_MS } from '../fleet/fleet-view.js';
import type { LivePoint, LiveRun, LiveSnapshot } from './live-snapshot.js';

export interface LiveSamplerOptions {
  store: SqlStore;
  clock: { now(): number };
  logger: Logger;
  /** As the API's: a run whose scheduler went quiet for longer is shown `queued`. */
  staleAfterMs: number;
  agentLostAfterMs?: number;
  /** One snapshot per interval (1 s unless given). */
  intervalMs?: number;
  /** How much of the series a new subscriber is sent (15 min unless given). */
  historyMs?: number;
}

export type LiveListener = (snapshot: LiveSnapshot) => void;

/** Runs shown besides the active ones: the latest that ended. */
const RECENT_RUNS = 10;
const ACTIVE_RUNS = 50;
/** Failure-log rows read per run and tick: a run failing faster is counted over several ticks. */
const FAILURES_PER_TICK = 1_000;

/**
 * What the dashboard shows live, read from SQL once per interval whoever watches: the runs
 * (active ones and the latest ended), the fleet, the active alerts, and a series of points
 * (pages per second per run, errors by code) for the charts. Everything in a snapshot is in SQL;
 * the series is made of differences between reads, so a master that restarts starts its charts
 * again (the counters themselves are not lost). One sampler per master process: every dashboard
 * shares its reads, so the SQL load does not grow with the number of people watching.
 */
export class LiveSampler {
  private readonly intervalMs: number;
  private readonly historyMs: number;
  private readonly lostAfterMs: number;
  private readonly listeners = new Set<LiveListener>();
  private readonly series: LivePoint[] = [];
  private readonly lastDone = new Map<string, { done: number; at: number }>();
  /**
   * Per run: the failure log's cursor (moved past full pages only: the cursor of a page's last row
   * is the adapter's to make), the highest row id counted, and when the sampler first looked.
   */
  private readonly failureCursor = new Map<
    string,
    { after: string | null; counted: string; since: number }
  >();
  private timer: NodeJS.Timeout | null = null;
  private latest: LiveSnapshot | null = null;
  private ticking = false;

  constructor(private readonly options: LiveSamplerOptions) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.historyMs = options.historyMs ?? 15 * 60_000;
    this.lostAfterMs = options.agentLostAfterMs ?? DEFAULT_AGENT_LOST_AFTER_MS;
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
  }

  /** The points of the last `historyMs`, oldest first. */
  history(): LivePoint[] {
    return [...this.series];
  }

  /** The last snapshot taken, if any. */
  current(): LiveSnapshot | null {
    return this.latest;
  }

  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One read of SQL, sent to every subscriber (public so tests can step it). */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const snapshot = await this.read();
      this.latest = snapshot;
      this.series.push(snapshot.point);
      const oldest = snapshot.point.t - this.historyMs;
      while (this.series.length > 0 && (this.series[0] as LivePoint).t < oldest) this.series.shift();
      for (const listener of this.listeners) listener(snapshot);
    } catch (err) {
      this.options.logger.warn(
        { err: errorMessage(err) },
        'the dashboard could not read the store; trying again',
      );
    } finally {
      this.ticking = false;
    }
  }

  private async read(): Promise<LiveSnapshot> {
    const { store, clock, staleAfterMs } = this.options;
    const [active, recent, agents, alerts] = await Promise.all([
      store.runs.list({ limit: ACTIVE_RUNS, states: ['queued', 'running', 'paused'] }),
      store.runs.list({ limit: RECENT_RUNS }),
      store.agents.list({ limit: 100 }),
      store.alerts.list({ limit: 50, states: ['active'] }),
    ]);
    const now = clock.now();
    const rows = new Map<string, RunRow>();
    for (const row of [...active.items, ...recent.items]) rows.set(row.id, row);
    const runs: LiveRun[] = [...rows.values()]
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((row) => {
        const { settings: _settings, ...view } = runView(row, now, staleAfterMs);
        return view;
      });
    const perRun: Record<string, number> = {};
    for (const row of rows.values()) {
      const rate = this.rateOf(row, now);
      if (rate !== null) perRun[row.id] = rate;
    }
    for (const id of this.lastDone.keys()) if (!rows.has(id)) this.lastDone.delete(id);
    const errors = await this.newErrors(
      active.items.filter((row) => row.state !== 'queued'),
      now,
    );
    const agentViews = await Promise.all(
      agents.items.map(async (agent) =>
        agentView(agent, await store.agents.processes(agent.id), now, this.lostAfterMs),
      ),
    );
    const pagesPerSecond = Object.values(perRun).reduce((sum, rate) => sum + rate, 0);
    return {
      at: new Date(now).toISOString(),
      runs,
      agents: agentViews,
      alerts: alerts.items.map(alertView),
      point: { t: now, pagesPerSecond: round(pagesPerSecond), runs: perRun, errors },
    };
  }

  /** Pages per second since the last read (the run's own figure at the first). */
  private rateOf(row: RunRow, now: number): number | null {
    const last = this.lastDone.get(row.id);
    this.lastDone.set(row.id, { done: row.counters.done, at: now });
    const ended = row.state !== 'running' && row.state !== 'paused';
    if (last === undefined) return ended ? null : round(row.counters.pagesPerSecond);
    const seconds = (now - last.at) / 1000;
    if (seconds <= 0) return null;
    const rate = Math.max(0, row.counters.done - last.done) / seconds;
    return ended && rate === 0 ? null : round(rate);
  }

  /** Failure-log rows (retries and final failures) written since the last read, by code. */
  private async newErrors(runs: readonly RunRow[], now: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const id of this.failureCursor.keys()) {
      if (!runs.some((run) => run.id === id)) this.failureCursor.delete(id);
    }
    for (const run of runs) {
      let cursor = this.failureCursor.get(run.id);
      if (cursor === undefined) {
        cursor = { after: null, counted: '0', since: now - this.intervalMs };
        this.failureCursor.set(run.id, cursor);
      }
      const page = await this.options.store.logs.list(run.id, {
        limit: FAILURES_PER_TICK,
        after: cursor.after,
      });
      for (const row of page.items) {
        if (!idAbove(row.id, cursor.counted)) continue;
        cursor.counted = row.id;
        // Rows from before the sampler looked are history it does not chart.
        if (row.at >= cursor.since) counts[row.code] = (counts[row.code] ?? 0) + 1;
      }
      if (page.next !== null) cursor.after = page.next;
    }
    return counts;
  }
}

/** Log ids are decimal text growing from 1. */
function idAbove(id: string, than: string): boolean {
  return id.length !== than.length ? id.length > than.length : id > than;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
