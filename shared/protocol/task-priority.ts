/**
 * Priority levels. A frontier keeps one queue per level (quorum queues have no per-message
 * priority), leases from higher levels first and still gives every lower level a guaranteed share
 * (see shared/adapters/frontier/level-picker.ts), so no level starves.
 */
export const PRIORITY_LEVELS = 4;

/** The highest level: leased first. */
export const TOP_LEVEL = PRIORITY_LEVELS - 1;

/**
 * How a run orders its own tasks: `breadth-first` shallower pages first, `depth-first` deeper
 * pages first, `fifo` the run's priority only (every task of the run on one level, oldest first).
 */
export type PriorityRule = 'breadth-first' | 'depth-first' | 'fifo';

/** The two settings of a run (its job) that decide its tasks' levels. */
export interface RunPriority {
  /** The run's priority: 0 (lowest) to PRIORITY_LEVELS - 1; rounded and clamped into that range. */
  priority: number;
  priorityRule: PriorityRule;
}

/**
 * A task's level, 0..PRIORITY_LEVELS - 1 (higher leased first), from its run's priority and rule
 * and the task's depth. The run's priority is the level of its most urgent tasks; the rule moves
 * the others down one level per step, as Scrapy's DEPTH_PRIORITY does:
 * - breadth-first: level = priority - depth (seeds at the run's level, each link one lower);
 * - depth-first: level = priority - (PRIORITY_LEVELS - 1) + depth (seeds lowest, the deepest up
 *   to the run's level);
 * - fifo: level = priority.
 * Clamped to the range, so past PRIORITY_LEVELS - 1 steps the order within a run is FIFO. A higher
 * run priority never gives a task a lower level.
 */
export function taskLevel(run: RunPriority, depth: number): number {
  const base = clampLevel(run.priority);
  const steps = Number.isFinite(depth) ? Math.max(0, Math.floor(depth)) : 0;
  switch (run.priorityRule) {
    case 'breadth-first':
      return clampLevel(base - steps);
    case 'depth-first':
      return clampLevel(base - TOP_LEVEL + steps);
    case 'fifo':
      return base;
  }
}

/** Any number to a level: rounded, clamped to 0..PRIORITY_LEVELS - 1; not a number is level 0. */
export function clampLevel(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(TOP_LEVEL, Math.max(0, Math.round(value)));
}
