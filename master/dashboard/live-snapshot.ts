import type { z } from 'zod';
import type { agentSchema } from '../api/schemas/agent.js';
import type { alertSchema } from '../api/schemas/alert.js';
import type { RunView } from '../api/schemas/run.js';

/** A run as the live stream shows it: the API's view without its settings (GET /runs/{id} has them). */
export type LiveRun = Omit<RunView, 'settings'>;

/** One point of the dashboard's charts. */
export interface LivePoint {
  /** When it was read (ms since the epoch). */
  t: number;
  /** Pages settled per second over the last interval, every run together. */
  pagesPerSecond: number;
  /** The same per run (runs that moved or are active). */
  runs: Record<string, number>;
  /** Failure-log rows (retries and final failures) written over the last interval, by error code. */
  errors: Record<string, number>;
}

/** What `GET /api/v1/live` sends as each `snapshot` event (docs/dashboard.md). */
export interface LiveSnapshot {
  at: string;
  /** Active runs (queued, running, paused) and the latest ended, newest first. */
  runs: LiveRun[];
  agents: z.input<typeof agentSchema>[];
  /** Alerts that hold now. */
  alerts: z.input<typeof alertSchema>[];
  point: LivePoint;
}
