import assert from 'node:assert/strict';
import type { JobRow, RunRow, TokenRow } from '../../../shared/ports/sql-store.js';

/** Rejects with an AppError of `code` (and, when given, these details). */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  details: Record<string, unknown> = {},
): Promise<Error & { code: string; status?: number; retriable: boolean; details?: Record<string, unknown> }> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    return true;
  });
  const e = caught as Error & {
    code: string;
    status?: number;
    retriable: boolean;
    details?: Record<string, unknown>;
  };
  assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
  for (const [k, v] of Object.entries(details)) assert.deepEqual(e.details?.[k], v, `details.${k}`);
  return e;
}

let seq = 0;
const unique = (prefix: string): string =>
  `${prefix}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

export function job(fields: Partial<JobRow> = {}): JobRow {
  return {
    id: unique('job'),
    name: unique('name'),
    settings: { seeds: ['http://127.0.0.1/'] },
    createdAt: 1_000,
    updatedAt: 1_000,
    ...fields,
  };
}

export function run(jobId: string, fields: Partial<RunRow> = {}): RunRow {
  return {
    id: unique('run'),
    jobId,
    state: 'queued',
    settings: { seeds: ['http://127.0.0.1/'], maxPages: 10 },
    counters: { done: 0, failed: 0, queued: 0, inFlight: 0, pagesPerSecond: 0, notModified: 0 },
    createdAt: 2_000,
    startedAt: null,
    endedAt: null,
    schedulerId: null,
    heartbeatAt: null,
    error: null,
    scheduledBy: null,
    ...fields,
  };
}

export function token(fields: Partial<TokenRow> = {}): TokenRow {
  const id = unique('tok');
  return {
    id,
    name: `token ${id}`,
    scopes: ['read'],
    hash: Buffer.from(id).toString('hex').padEnd(64, '0').slice(0, 64),
    createdAt: 3_000,
    revokedAt: null,
    lastUsedAt: null,
    ...fields,
  };
}

/** Every page of a list, following `next`. */
export async function allPages<T>(
  list: (after: string | null) => Promise<{ items: T[]; next: string | null }>,
): Promise<{ pages: T[][]; items: T[] }> {
  const pages: T[][] = [];
  let after: string | null = null;
  for (let i = 0; i < 1_000; i += 1) {
    const page = await list(after);
    pages.push(page.items);
    if (page.next === null) return { pages, items: pages.flat() };
    assert.notEqual(page.next, after, 'a cursor must move on');
    after = page.next;
  }
  throw new Error('paging did not end');
}
