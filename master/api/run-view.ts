import type { RunRow, RunState } from '../../shared/ports/sql-store.js';
import { deadlineOf } from '../runs/time-limits.js';
import { toIso, toIsoOrNull } from './schemas/common.js';
import type { RunView } from './schemas/run.js';

/**
 * What a run is shown as. A run stored `running` is only shown so while its scheduler reports: a
 * scheduler that crashed cannot say so, so after `staleAfterMs` without a heartbeat the run is
 * shown `queued`, waiting for a scheduler to take it up (schedulers read their runs from SQL, so
 * one will), and `waiting` says why. A running run whose scheduler reports a stall (it can make no
 * outcome durable: a store down, a full disk, a broker blocking publishing) stays `running`, and
 * `waiting` says why nothing moves.
 */
export function runView(row: RunRow, now: number, staleAfterMs: number): RunView {
  const { state, waiting } = shownState(row, now, staleAfterMs);
  return {
    id: row.id,
    jobId: row.jobId,
    state,
    waiting,
    counters: row.counters,
    settings: row.settings,
    schedulerId: row.schedulerId,
    heartbeatAt: toIsoOrNull(row.heartbeatAt),
    createdAt: toIso(row.createdAt),
    startedAt: toIsoOrNull(row.startedAt),
    endedAt: toIsoOrNull(row.endedAt),
    endsBy: row.endedAt === null ? toIsoOrNull(deadlineOf(row)) : null,
    error: row.error,
    scheduledBy:
      row.scheduledBy === null
        ? null
        : { scheduleId: row.scheduledBy.scheduleId, fireAt: toIso(row.scheduledBy.fireAt) },
  };
}

export function shownState(
  row: Pick<RunRow, 'state' | 'schedulerId' | 'heartbeatAt' | 'stall'>,
  now: number,
  staleAfterMs: number,
): { state: RunState; waiting: string | null } {
  if (row.state === 'queued') return { state: 'queued', waiting: 'no scheduler has taken the run yet' };
  if (row.state !== 'running') return { state: row.state, waiting: null };
  if (row.heartbeatAt !== null && now - row.heartbeatAt <= staleAfterMs) {
    // Running, but its scheduler said at its last report that no outcome can be made durable.
    const stall = row.stall;
    if (stall === undefined) return { state: 'running', waiting: null };
    const seconds = Math.max(0, Math.round((now - stall.since) / 1000));
    return { state: 'running', waiting: `${stall.reason}; nothing acknowledged for ${seconds} s` };
  }
  const who = row.schedulerId === null ? 'its scheduler' : `scheduler ${row.schedulerId}`;
  const last =
    row.heartbeatAt === null
      ? 'has never reported'
      : `last reported ${Math.round((now - row.heartbeatAt) / 1000)} s ago`;
  return {
    state: 'queued',
    waiting: `${who} ${last} (more than ${Math.round(staleAfterMs / 1000)} s): the run waits for a live scheduler to take it up`,
  };
}

/** The stored states a run shown in `shown` can have. */
export function storedStatesFor(shown: readonly RunState[]): RunState[] {
  const stored = new Set<RunState>(shown);
  if (stored.has('queued')) stored.add('running');
  return [...stored];
}
