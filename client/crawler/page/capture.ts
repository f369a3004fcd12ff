import { randomUUID } from 'node:crypto';
import type { WireTask } from '../../../shared/protocol/messages.js';
import { DEFAULT_JOB_ID } from '../../../shared/protocol/page-record.js';
import { DEFAULT_RUN_ID } from '../../../shared/protocol/task.js';

/** What ties a record to its crawl and to this fetch (page record `/3`). */
export interface Capture {
  jobId: string;
  runId: string;
  captureId: string;
}

/**
 * The task's job, run and capture id as its record carries them. A scheduler always sends them;
 * a task without them (a test, a hand-written task) belongs to the default run and gets a fresh id.
 */
export function captureOf(task: Pick<WireTask, 'jobId' | 'runId' | 'captureId'>): Capture {
  return {
    jobId: task.jobId ?? DEFAULT_JOB_ID,
    runId: task.runId ?? DEFAULT_RUN_ID,
    captureId: task.captureId ?? randomUUID(),
  };
}
