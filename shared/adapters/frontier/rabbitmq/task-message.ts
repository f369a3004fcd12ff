import { createHash } from 'node:crypto';
import { jsonObjectOf } from './json-body.js';
import { clampLevel } from '../../../protocol/task-priority.js';
import { RUN_ID_PATTERN, type NewTask, type TaskKind } from '../../../protocol/task.js';

/**
 * A task as it travels through the queues: a JSON body, one task per message. `attempt` grows with
 * each retry; `notBefore` (ms since the epoch, on the frontier's clock) is set on a delayed retry,
 * so a message that comes back from its delay queue too early is sent round again.
 */
export interface TaskMessage {
  v: 2;
  /** Its run: the message is in that run's queue of level `priority` (0..PRIORITY_LEVELS - 1). */
  runId: string;
  url: string;
  host: string;
  depth: number;
  priority: number;
  parentUrl: string | null;
  attempt: number;
  lastError: string | null;
  notBefore?: number;
  /** Absent: a page. */
  kind?: TaskKind;
  lastmod?: string;
}

export function newTaskMessage(task: NewTask): TaskMessage {
  return {
    v: 2,
    runId: task.runId,
    url: task.url,
    host: task.host,
    depth: task.depth,
    priority: clampLevel(task.priority),
    parentUrl: task.parentUrl ?? null,
    attempt: 1,
    lastError: null,
    ...(task.kind === 'sitemap' ? { kind: task.kind } : {}),
    ...(typeof task.lastmod === 'string' ? { lastmod: task.lastmod } : {}),
  };
}

export function encodeTaskMessage(message: TaskMessage): Buffer {
  return Buffer.from(JSON.stringify(message));
}

/** The message, or null when the body is not one (it goes to the dead queue as it is). */
export function decodeTaskMessage(content: Buffer): TaskMessage | null {
  const m = jsonObjectOf(content);
  if (m === null) return null;
  const ok =
    m.v === 2 &&
    typeof m.runId === 'string' &&
    RUN_ID_PATTERN.test(m.runId) &&
    typeof m.url === 'string' &&
    m.url !== '' &&
    typeof m.host === 'string' &&
    Number.isFinite(m.depth) &&
    Number.isFinite(m.priority) &&
    (m.parentUrl === null || typeof m.parentUrl === 'string') &&
    Number.isInteger(m.attempt) &&
    (m.attempt as number) >= 1 &&
    (m.lastError === null || typeof m.lastError === 'string') &&
    (m.notBefore === undefined || Number.isFinite(m.notBefore)) &&
    (m.kind === undefined || m.kind === 'page' || m.kind === 'sitemap') &&
    (m.lastmod === undefined || typeof m.lastmod === 'string');
  return ok ? (m as unknown as TaskMessage) : null;
}

/**
 * A task's id: a digest of its run and URL, so it is short enough for the wire (URLs may not be),
 * the same for every delivery of the task, and the same across processes.
 */
export function taskIdFor(runId: string, url: string): string {
  return createHash('sha256').update(`${runId}\n${url}`).digest('base64url').slice(0, 22);
}
