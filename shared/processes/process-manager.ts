import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../logger.js';
import type { ProcessState } from '../ports/sql-store.js';
import type { DesiredState, ProcessReport } from '../protocol/agent.js';
import { crawlerStatsSchema, type CrawlerStats } from '../protocol/crawler-stats.js';
import { CrashHistory } from './crash-history.js';

export interface Spawner {
  /** Starts one crawler process for `slot` (a render-capable one when `render`). */
  (slot: number, render: boolean): ChildProcess;
}

/** Render-capable slots are numbered from here, apart from the ones a count scales. */
export const RENDER_SLOT_BASE = 1000;

export interface ProcessManagerOptions {
  spawn: Spawner;
  logger: Logger;
  /** SIGTERM (the crawler drains), then SIGKILL after this. */
  stopTimeoutMs: number;
  /**
   * This many failed starts of one slot within `crashLoopWindowMs` make it a crash loop, no longer
   * restarted. A failed start is an exit before the process reported running, or within
   * `crashLoopMinUptimeMs` of its start (as supervisord's startsecs): a crawler killed while it
   * works (kill -9, the OOM killer) is restarted with backoff however often.
   */
  crashLoopCrashes: number;
  crashLoopWindowMs: number;
  crashLoopMinUptimeMs?: number;
  /** First pause before a restart, doubled for each recent crash, up to 10 s. */
  restartBackoffMs: number;
  /** Render-capable processes kept besides the counted ones (not scaled by the master). */
  renderProcesses: number;
  now?: () => number;
  /** A process was started or exited (the pid file is rewritten). */
  onChange?: () => void;
}

const MAX_BACKOFF_MS = 10_000;
const DEFAULT_MIN_UPTIME_MS = 1_000;

interface Slot {
  slot: number;
  render: boolean;
  child: ChildProcess | null;
  state: ProcessState;
  startedAt: number | null;
  restarts: number;
  crashes: CrashHistory;
  /** Every exit (for the backoff). */
  exits: CrashHistory;
  timer: NodeJS.Timeout | null;
  /** Counters of the slot's earlier processes, and of the current one (its own, from IPC). */
  before: CrawlerStats;
  current: CrawlerStats;
  /** Wanted running (false: wanted stopped; a stop in progress finishes as `stopped`). */
  wanted: boolean;
  /** Removed from the count: forgotten once stopped. */
  retired: boolean;
  stopping: Promise<void> | null;
}

const ZERO: CrawlerStats = { inFlight: 0, pagesDone: 0, errors: 0 };

/**
 * Keeps a host's crawler processes as the master wants them: `reconcile` takes the desired
 * state (count, stopped slots, restarts, drain) and starts, stops or restarts slots to match.
 * A process that exits on its own is restarted with backoff; one that keeps crashing is left as
 * `crash-loop` until a restart is asked. A stop is a drain: SIGTERM (the crawler takes no new
 * task, finishes or hands back what is in flight), then SIGKILL after `stopTimeoutMs`.
 */
export class ProcessManager {
  private readonly slots = new Map<number, Slot>();
  /** Restarts asked per slot, as last seen: a number that grows restarts the slot once. */
  private seenRestarts: Record<string, number> | null = null;
  private closing = false;
  private readonly now: () => number;

  constructor(private readonly options: ProcessManagerOptions) {
    this.now = options.now ?? Date.now;
    for (let i = 0; i < options.renderProcesses; i += 1) this.ensure(RENDER_SLOT_BASE + i, true);
  }

  /** Without a master: keep `count` processes running. */
  scale(count: number): void {
    this.apply(
      { desiredProcesses: count, drain: false, stoppedSlots: [], restarts: {}, heartbeatMs: 0 },
      false,
    );
  }

  /** Makes the running processes match what the master wants. Idempotent. */
  reconcile(desired: DesiredState): void {
    this.apply(desired, true);
  }

  private apply(desired: DesiredState, fromMaster: boolean): void {
    if (this.closing) return;
    const stopped = new Set(desired.stoppedSlots);
    const first = this.seenRestarts === null;
    const seen = this.seenRestarts ?? {};
    for (let n = 0; n < desired.desiredProcesses; n += 1) {
      const slot = this.ensure(n, false);
      slot.retired = false;
      const asked = desired.restarts[String(n)] ?? 0;
      const restart = fromMaster && !first && asked > (seen[String(n)] ?? 0);
      if (desired.drain || stopped.has(n)) this.stopSlot(slot);
      else if (restart) void this.restartSlot(slot);
      else this.keepRunning(slot);
    }
    for (const slot of this.slots.values()) {
      if (!slot.render && slot.slot >= desired.desiredProcesses) {
        slot.retired = true;
        this.stopSlot(slot);
      }
    }
    // Render slots follow a drain, and come back after it.
    for (const slot of this.slots.values()) {
      if (slot.render) {
        if (desired.drain) this.stopSlot(slot);
        else this.keepRunning(slot);
      }
    }
    if (fromMaster) this.seenRestarts = { ...seen, ...desired.restarts };
  }

  /** Crawler stats from a process's IPC message. */
  private onStats(slot: Slot, child: ChildProcess, message: unknown): void {
    const parsed = crawlerStatsSchema.safeParse(message);
    if (!parsed.success || slot.child !== child) return;
    slot.current = parsed.data;
    if (slot.state === 'starting') {
      slot.state = 'running';
      this.options.onChange?.();
    }
  }

  /** Every slot as it is now, by slot (pid, RSS and CPU are added by the reporter). */
  report(): (Omit<ProcessReport, 'rssBytes' | 'cpuSeconds'> & { render: boolean })[] {
    return [...this.slots.values()]
      .sort((a, b) => a.slot - b.slot)
      .map((s) => ({
        slot: s.slot,
        render: s.render,
        pid: s.child?.pid ?? null,
        state: s.state,
        startedAt: s.child ? s.startedAt : null,
        restarts: s.restarts,
        inFlight: s.child ? s.current.inFlight : 0,
        pagesDone: s.before.pagesDone + s.current.pagesDone,
        errors: s.before.errors + s.current.errors,
      }));
  }

  /** PIDs of the processes running now (for the pid file). */
  pids(): number[] {
    return [...this.slots.values()].flatMap((s) => (s.child?.pid === undefined ? [] : [s.child.pid]));
  }

  /** Drains every process; none starts afterwards. Safe to call twice. */
  async stop(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.slots.values()].map((slot) => this.stopSlot(slot)));
  }

  private ensure(n: number, render: boolean): Slot {
    let slot = this.slots.get(n);
    if (!slot) {
      slot = {
        slot: n,
        render,
        child: null,
        state: 'stopped',
        startedAt: null,
        restarts: 0,
        crashes: new CrashHistory(this.options.crashLoopCrashes, this.options.crashLoopWindowMs),
        exits: new CrashHistory(Number.MAX_SAFE_INTEGER, this.options.crashLoopWindowMs),
        timer: null,
        before: { ...ZERO },
        current: { ...ZERO },
        wanted: false,
        retired: false,
        stopping: null,
      };
      this.slots.set(n, slot);
    }
    return slot;
  }

  private keepRunning(slot: Slot): void {
    if (slot.wanted || slot.state === 'crash-loop') return;
    slot.wanted = true;
    // A slot still draining from a stop starts again once it has stopped.
    if (slot.stopping === null) this.start(slot);
  }

  private start(slot: Slot): void {
    if (this.closing || !slot.wanted || slot.child) return;
    const child = this.options.spawn(slot.slot, slot.render);
    slot.child = child;
    slot.current = { ...ZERO };
    slot.state = 'starting';
    slot.startedAt = this.now();
    this.options.logger.info({ slot: slot.slot, pid: child.pid }, 'crawler started');
    child.on('message', (message: unknown) => this.onStats(slot, child, message));
    child.once('error', (err) => {
      this.options.logger.error({ err, slot: slot.slot }, 'crawler could not start');
      // A spawn that failed (EAGAIN, EMFILE, ENOENT) emits no 'exit': treat it as one, so the slot
      // is restarted with backoff (or shown a crash loop) and a stop does not wait for it.
      if (child.pid === undefined) this.onExit(slot, child, null, null);
    });
    child.once('exit', (code, signal) => this.onExit(slot, child, code, signal));
    this.options.onChange?.();
  }

  private onExit(slot: Slot, child: ChildProcess, code: number | null, signal: string | null): void {
    if (slot.child !== child) return;
    const now = this.now();
    const failedStart =
      slot.state !== 'running' ||
      now - (slot.startedAt ?? now) < (this.options.crashLoopMinUptimeMs ?? DEFAULT_MIN_UPTIME_MS);
    slot.child = null;
    slot.before = {
      inFlight: 0,
      pagesDone: slot.before.pagesDone + slot.current.pagesDone,
      errors: slot.before.errors + slot.current.errors,
    };
    slot.current = { ...ZERO };
    this.options.onChange?.();
    if (slot.stopping !== null || !slot.wanted || this.closing) {
      slot.state = 'stopped';
      return;
    }
    slot.restarts += 1;
    const recent = slot.exits.add(now);
    if (failedStart) slot.crashes.add(now);
    if (failedStart && slot.crashes.looping(now)) {
      slot.state = 'crash-loop';
      slot.wanted = false;
      this.options.logger.error(
        { slot: slot.slot, code, signal, exits: recent },
        'crawler keeps crashing: a crash loop; not restarted until a restart is asked',
      );
      return;
    }
    const backoff = Math.min(this.options.restartBackoffMs * 2 ** (recent - 1), MAX_BACKOFF_MS);
    slot.state = 'starting';
    this.options.logger.warn(
      { slot: slot.slot, code, signal, restartInMs: backoff },
      'crawler exited; starting it again',
    );
    slot.timer = setTimeout(() => {
      slot.timer = null;
      this.start(slot);
    }, backoff);
  }

  /** Drain then stop; the slot stays stopped (or is forgotten if retired). */
  private stopSlot(slot: Slot): Promise<void> {
    slot.wanted = false;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (slot.stopping) return slot.stopping;
    const child = slot.child;
    if (!child) {
      if (slot.state !== 'crash-loop' || slot.retired) slot.state = 'stopped';
      if (slot.retired) this.slots.delete(slot.slot);
      return Promise.resolve();
    }
    slot.state = 'stopping';
    slot.stopping = (async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        this.options.logger.warn(
          { slot: slot.slot, pid: child.pid },
          'crawler did not drain in time; SIGKILL',
        );
        child.kill('SIGKILL');
      }, this.options.stopTimeoutMs);
      await exited;
      clearTimeout(timer);
      slot.stopping = null;
      slot.state = 'stopped';
      if (slot.retired && !slot.wanted) this.slots.delete(slot.slot);
      else if (slot.wanted) this.start(slot);
    })();
    return slot.stopping;
  }

  private async restartSlot(slot: Slot): Promise<void> {
    slot.crashes.clear();
    slot.exits.clear();
    if (slot.state === 'crash-loop') slot.state = 'stopped';
    await this.stopSlot(slot);
    slot.wanted = true;
    this.start(slot);
  }
}
