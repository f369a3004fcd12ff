import type { TaskValidators, Validators, WireTask } from '../../../shared/protocol/messages.js';
import { MAX_VALIDATOR_LENGTH } from '../../../shared/protocol/task.js';

/**
 * The conditional request a recrawl task asks for (RFC 9110 §13.1): `If-None-Match` with the last
 * capture's ETag, `If-Modified-Since` with its Last-Modified. A server that honours both answers
 * 304 only when neither changed (If-None-Match takes precedence when it knows ETags). Rendered and
 * sitemap tasks are fetched in full: a browser's DOM and a sitemap's entries are not in a 304.
 */
export function conditionalHeaders(task: WireTask): Record<string, string> | null {
  const v = recrawlValidators(task);
  if (v === null) return null;
  const headers: Record<string, string> = {};
  if (v.etag !== undefined) headers['if-none-match'] = v.etag;
  if (v.lastModified !== undefined) headers['if-modified-since'] = v.lastModified;
  return Object.keys(headers).length > 0 ? headers : null;
}

/** The task's validators when its fetch may be conditional, else null. */
export function recrawlValidators(task: WireTask): TaskValidators | null {
  const v = task.validators;
  if (!v || task.render === true || (task.kind !== undefined && task.kind !== 'page')) return null;
  return v.etag !== undefined || v.lastModified !== undefined ? v : null;
}

/**
 * A response's ETag and Last-Modified, for the next run's conditional request; undefined when it
 * had neither (or only values too long to keep).
 */
export function responseValidators(headers: Record<string, string>): Validators | undefined {
  const etag = usable(headers['etag']);
  const lastModified = usable(headers['last-modified']);
  if (etag === undefined && lastModified === undefined) return undefined;
  return { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) };
}

function usable(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v && v.length <= MAX_VALIDATOR_LENGTH ? v : undefined;
}
