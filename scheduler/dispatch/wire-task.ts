import { randomUUID } from 'node:crypto';
import type { TaskValidators, WireTask } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import type { WireCookie } from '../../shared/protocol/wire-cookie.js';

/**
 * What a crawler gets of a lease. Each call is one dispatched attempt, with a capture id of its
 * own that its record carries (page record `/3`).
 */
export function wireTaskOf(
  lease: Lease,
  options: {
    render: boolean;
    reportStart: boolean;
    /** Redirects back to the task's host ask the scheduler first (robots.txt, and a paced host's delay). */
    hopGrants: boolean;
    jobId: string;
    validators?: TaskValidators;
    /** The host's session cookies (a run with `sessionCookies`); undefined: no session. */
    cookies?: readonly WireCookie[] | undefined;
  },
): WireTask {
  return {
    taskId: lease.taskId,
    runId: lease.runId,
    jobId: options.jobId,
    captureId: randomUUID(),
    url: lease.url,
    depth: lease.depth,
    attempt: lease.attempt,
    parentUrl: lease.parentUrl,
    ...(options.render ? { render: true } : {}),
    // A paced host: the crawler reports its request's start.
    ...(options.reportStart ? { reportStart: true } : {}),
    // Redirects back to the host wait for the scheduler's grant (Dispatcher.hop).
    ...(options.hopGrants ? { hopGrants: true } : {}),
    // Sitemaps (scheduler/robots): what to do with the URL, and the lastmod its record carries.
    ...(lease.kind ? { kind: lease.kind } : {}),
    ...(lease.lastmod ? { lastmod: lease.lastmod } : {}),
    ...lastErrorCodeOf(lease),
    // A recrawl: a conditional request with the URL's last capture's validators (docs/recrawl.md).
    ...(options.validators ? { validators: options.validators } : {}),
    // A session (possibly empty): the crawler returns the jar's cookies when a response set one.
    ...(options.cookies ? { cookies: [...options.cookies] } : {}),
  };
}

/** A retried task's last error code (its `lastError` is `CODE: message`): see WireTask. */
function lastErrorCodeOf(lease: Lease): { lastErrorCode?: string } {
  if (lease.attempt <= 1 || lease.lastError === null) return {};
  const code = /^[A-Z][A-Z0-9_]{0,99}(?=:|$)/.exec(lease.lastError)?.[0];
  return code ? { lastErrorCode: code } : {};
}
