import {
  ROBOTS_MAX_BYTES,
  type RobotsAnswer,
  type WireFailure,
  type WireTask,
} from '../../../shared/protocol/messages.js';
import type { FetchedPage } from '../fetch/fetcher.js';
import { toFetchError } from '../fetch/fetch-error.js';

/**
 * A `robots` task: fetch robots.txt with the crawler's own client (user agent, proxies, address
 * filter, timeouts; redirects followed), keep at most 500 KiB, and answer with its status and text.
 * The scheduler decides what the status means. Never throws.
 */
export async function fetchRobots(
  task: WireTask,
  fetcher: {
    fetch(
      url: string,
      hooks: { maxBodyBytes: number; truncate: boolean; signal?: AbortSignal },
    ): Promise<FetchedPage>;
  },
  signal?: AbortSignal,
): Promise<string> {
  let answer: RobotsAnswer;
  try {
    const page = await fetcher.fetch(task.url, {
      maxBodyBytes: ROBOTS_MAX_BYTES,
      truncate: true,
      ...(signal ? { signal } : {}),
    });
    const ok = page.status >= 200 && page.status < 300;
    answer = {
      type: 'robots',
      taskId: task.taskId,
      status: page.status,
      body: ok ? page.body.toString('utf8').slice(0, ROBOTS_MAX_BYTES) : '',
      failure: null,
    };
  } catch (err) {
    return robotsFailure(task, err);
  }
  return JSON.stringify(answer);
}

/** The answer to a `robots` task that failed: the failure as a typed code (the scheduler retries). */
export function robotsFailure(task: WireTask, err: unknown): string {
  const error = toFetchError(err);
  const failure: WireFailure = {
    code: error.code,
    message: error.message.slice(0, 2000),
    retriable: error.retriable,
    status: error.httpStatus,
    retryAfterMs: error.retryAfterMs,
  };
  const answer: RobotsAnswer = {
    type: 'robots',
    taskId: task.taskId,
    status: error.httpStatus,
    body: '',
    failure,
  };
  return JSON.stringify(answer);
}
