import type { Logger } from '../../shared/logger.js';
import type { HostedRun } from './hosted-run.js';
import type { SessionStore } from './session-store.js';

export interface SessionFlusherDeps {
  store: SessionStore;
  /** The runs hosted now. */
  runs: () => Iterable<HostedRun>;
  logger: Logger;
  /** How often the sessions' changes are written (default 1 s): what a kill -9 can lose. */
  intervalMs?: number;
  clock?: () => number;
}

export const SESSION_FLUSH_MS = 1_000;
/** One warning per this long while writes fail (a full disk would warn at every flush). */
const WARN_EVERY_MS = 60_000;

/**
 * Writes the hosted runs' sessions (`sessionCookies`) to the session store: every interval, the
 * domains whose cookies changed, one transaction a run; and once more when the scheduler stops. A
 * write that fails (a full disk) leaves its changes to the next one; the crawl goes on in memory.
 * A cancelled run's session is not written (it is forgotten).
 */
export class SessionFlusher {
  private timer: NodeJS.Timeout | null = null;
  private lastWarnAt = -Infinity;
  private readonly clock: () => number;

  constructor(private readonly deps: SessionFlusherDeps) {
    this.clock = deps.clock ?? Date.now;
  }

  start(): void {
    this.timer ??= setInterval(() => this.flush(), this.deps.intervalMs ?? SESSION_FLUSH_MS);
    this.timer.unref();
  }

  flush(): void {
    for (const run of this.deps.runs()) {
      if (run.cookies === null || run.state === 'cancelled') continue;
      const changes = run.cookies.takeChanges();
      if (changes.size === 0) continue;
      try {
        this.deps.store.write(run.runId, changes);
      } catch (err) {
        run.cookies.retake(changes.keys());
        this.warn(err, run.runId, 'could not write a run session; its changes are tried again');
      }
    }
  }

  /** The run ended or stopped keeping a session: what was written of it goes. */
  forget(runId: string): void {
    try {
      this.deps.store.forget(runId);
    } catch (err) {
      this.warn(err, runId, 'could not forget a run session; its rows stay in the session store');
    }
  }

  /** The run's session as last written (nothing when it cannot be read). */
  saved(runId: string): ReturnType<SessionStore['load']> {
    try {
      return this.deps.store.load(runId);
    } catch (err) {
      this.warn(err, runId, 'could not read a run session; it starts afresh');
      return [];
    }
  }

  /** Stops the timer and writes what changed since the last flush. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }

  private warn(err: unknown, runId: string, message: string): void {
    const now = this.clock();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.deps.logger.warn({ err, runId }, message);
  }
}
