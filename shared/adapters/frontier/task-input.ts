import { InvalidInputError } from '../../errors.js';
import { MAX_LASTMOD_LENGTH, RUN_ID_PATTERN, type NewTask } from '../../protocol/task.js';
import type { RunLimit, Settlement } from '../../ports/frontier.js';

/**
 * Checks tasks before any of them is written, so a bad one rejects the whole call with a typed
 * error instead of a half-applied batch or a storage error that claims retrying could help.
 */
export function assertNewTasks(tasks: readonly NewTask[]): void {
  for (const task of tasks) {
    const problem = newTaskProblem(task);
    if (problem !== null) {
      throw new InvalidInputError('FRONTIER_BAD_TASK', `invalid frontier task: ${problem}`, {
        details: { url: typeof task?.url === 'string' ? task.url : undefined },
      });
    }
  }
}

function newTaskProblem(task: NewTask): string | null {
  if (typeof task !== 'object' || task === null) return 'not an object';
  if (typeof task.runId !== 'string' || !RUN_ID_PATTERN.test(task.runId)) {
    return 'runId must be 1-64 of [A-Za-z0-9_-]';
  }
  if (typeof task.url !== 'string' || task.url === '') return 'url must be a non-empty string';
  if (typeof task.host !== 'string') return 'host must be a string';
  if (!Number.isFinite(task.depth)) return 'depth must be a finite number';
  if (!Number.isFinite(task.priority)) return 'priority must be a finite number';
  if (task.parentUrl !== null && task.parentUrl !== undefined && typeof task.parentUrl !== 'string') {
    return 'parentUrl must be a string or null';
  }
  if (task.kind !== undefined && task.kind !== 'page' && task.kind !== 'sitemap') {
    return "kind must be 'page' or 'sitemap'";
  }
  if (
    task.lastmod !== undefined &&
    task.lastmod !== null &&
    (typeof task.lastmod !== 'string' || task.lastmod.length > MAX_LASTMOD_LENGTH)
  ) {
    return `lastmod must be a string of at most ${MAX_LASTMOD_LENGTH} characters, or null`;
  }
  return null;
}

/** A settlement's tasks, delays, errors and checkpoint, checked up front (see assertNewTasks). */
export function assertSettlement(batch: Settlement): void {
  for (const outcome of [...batch.acks, ...batch.failures]) assertNewTasks(outcome.discovered ?? []);
  for (const retry of batch.retries) {
    if (!Number.isFinite(retry.delayMs)) {
      throw new InvalidInputError(
        'FRONTIER_BAD_SETTLEMENT',
        `retry delayMs must be finite, got ${retry.delayMs}`,
      );
    }
  }
  for (const outcome of [...batch.retries, ...batch.failures]) {
    if (typeof outcome.error !== 'string') {
      throw new InvalidInputError('FRONTIER_BAD_SETTLEMENT', 'retry and failure errors must be strings');
    }
  }
  if (batch.checkpoint !== undefined && typeof batch.checkpoint !== 'string') {
    throw new InvalidInputError('FRONTIER_BAD_SETTLEMENT', 'checkpoint must be a string');
  }
}

/** A lease duration: a positive finite number of milliseconds. */
export function assertLeaseMs(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new InvalidInputError('FRONTIER_BAD_LEASE_MS', `leaseMs must be a positive number, got ${leaseMs}`);
  }
}

/** A run id a control call or inspect names: 1-64 of [A-Za-z0-9_-]. */
export function assertRunId(runId: string): void {
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
    throw new InvalidInputError(
      'FRONTIER_BAD_RUN_ID',
      `run id must be 1-64 of [A-Za-z0-9_-], got ${String(runId)}`,
    );
  }
}

/** A run's cap from a RunLimit: a positive whole number, or undefined for none (0 and below included). */
export function runCap(limit: RunLimit | undefined, runId: string): number | undefined {
  const value = limit?.(runId);
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
