import type { RunLimit, Settlement } from '../../shared/ports/frontier.js';
import type { SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import type { CaptureUpdate } from '../recrawl/validators-index.js';

/** A lease as the settler names it; its run, when given, is counted per run (`batchCounts`). */
export type LeaseRef = Pick<Lease, 'taskId' | 'leaseId'> & { runId?: string };

/** A lease as the settler takes it: the task it names too, for the failure log. */
export type SettledLease = LeaseRef & Pick<Lease, 'runId' | 'url' | 'attempt'>;

/** One task's outcome on its way to durability. */
export interface Outcome {
  kind: 'ack' | 'fail' | 'retry';
  lease: SettledLease;
  /** Written to the sink before the settle; null when already durable (recovered) or a retry. */
  record: SinkRecord | null;
  /** URLs to push with the settle (acks, and failures of pages whose record could not be stored). */
  discovered: NewTask[];
  error: string;
  delayMs: number;
  /** Memory the outcome holds (its record and discovered URLs), for the backlog's bound in bytes. */
  bytes: number;
  /** A page's capture for the recrawl index, written once the batch is settled (acks only). */
  capture?: CaptureUpdate;
}

/** What one commit makes durable: records first, then one settle. */
export interface Batch {
  outcomes: Outcome[];
  bytes: number;
  /** The sink refused the batch as a whole: its records are written one by one. */
  oneByOne: boolean;
  /** Records already written one by one (a retry goes on after them), and the checkpoint after them. */
  recordsWritten: number;
  checkpoint: string | null;
}

/** Rough bytes a discovered task holds besides its URL (the object, host, numbers). */
const TASK_OVERHEAD_BYTES = 64;

export function outcomeBytes(record: SinkRecord | null, discovered: readonly NewTask[]): number {
  let bytes = record === null ? 0 : record.value.length + record.key.length;
  for (const task of discovered) bytes += task.url.length + TASK_OVERHEAD_BYTES;
  return bytes;
}

/**
 * Takes the oldest outcomes off `queue`, up to `maxRecordBytes` of records (at least one outcome,
 * however large): a commit hands the sink a bounded amount, the rest waits for the next one.
 */
export function takeBatch(queue: Outcome[], maxRecordBytes: number): Batch {
  let n = 0;
  let recordBytes = 0;
  let bytes = 0;
  for (const outcome of queue) {
    const size = outcome.record?.value.length ?? 0;
    if (n > 0 && recordBytes + size > maxRecordBytes) break;
    recordBytes += size;
    bytes += outcome.bytes;
    n += 1;
  }
  return { outcomes: queue.splice(0, n), bytes, oneByOne: false, recordsWritten: 0, checkpoint: null };
}

export function batchCounts(batch: Batch): BatchCounts {
  const counts = { acks: 0, retries: 0, failures: 0, byRun: new Map<string, number>() };
  for (const o of batch.outcomes) {
    if (o.kind === 'ack') counts.acks += 1;
    else if (o.kind === 'retry') counts.retries += 1;
    else counts.failures += 1;
    const runId = o.lease.runId;
    if (o.kind !== 'retry' && runId !== undefined)
      counts.byRun.set(runId, (counts.byRun.get(runId) ?? 0) + 1);
  }
  return counts;
}

export interface BatchCounts {
  acks: number;
  retries: number;
  failures: number;
  /** Final outcomes (acks and failures) per run, of the leases that named theirs. */
  byRun: Map<string, number>;
}

/** The batch as one frontier settlement; `maxTotal` is each run's limit (0 or undefined: none). */
export function toSettlement(batch: Batch, checkpoint: string | null, maxTotal: RunLimit): Settlement {
  const acks: { lease: LeaseRef; discovered: NewTask[] }[] = [];
  const retries: { lease: LeaseRef; delayMs: number; error: string }[] = [];
  const failures: { lease: LeaseRef; error: string; discovered?: NewTask[] }[] = [];
  for (const o of batch.outcomes) {
    if (o.kind === 'ack') acks.push({ lease: o.lease, discovered: o.discovered });
    else if (o.kind === 'retry') retries.push({ lease: o.lease, delayMs: o.delayMs, error: o.error });
    else
      failures.push({
        lease: o.lease,
        error: o.error,
        ...(o.discovered.length > 0 ? { discovered: o.discovered } : {}),
      });
  }
  return {
    acks,
    retries,
    failures,
    maxTotal,
    ...(checkpoint === null ? {} : { checkpoint }),
  };
}
