import type { RunRow, RunState } from '../../shared/ports/sql-store.js';
import type { RunReport } from './run-host.js';

/** The stored states of a run that a scheduler serves. */
export const OPEN_RUN_STATES: readonly RunState[] = ['queued', 'running', 'paused'];

export function isOpen(state: RunState): boolean {
  return OPEN_RUN_STATES.includes(state);
}

/** What this scheduler's host holds of a run: its state there and the settings it was given. */
export interface HostedRun {
  state: RunReport['state'];
  /** The settings the host runs it with, as stored JSON (to notice a change in SQL). */
  settingsJson: string;
}

/** One step that brings the host in line with SQL. */
export type SyncAction =
  | { kind: 'start'; row: RunRow; paused: boolean }
  | { kind: 'pause' | 'resume' | 'cancel'; runId: string }
  | { kind: 'update'; row: RunRow };

/**
 * What the host must do so that it serves what SQL says, SQL being the source of truth: every open
 * run hosted (a paused one paused), paused and resumed as stored, with the stored settings; and a
 * run that SQL holds cancelled cancelled on the host. A run the host finished
 * is left alone: its end is recorded in SQL by the caller, never re-opened here. `closed` holds the
 * stored rows of hosted runs that are not open (null: SQL has no such run).
 */
export function planSync(
  open: readonly RunRow[],
  closed: ReadonlyMap<string, RunRow | null>,
  hosted: ReadonlyMap<string, HostedRun>,
): SyncAction[] {
  const actions: SyncAction[] = [];
  for (const row of open) {
    const held = hosted.get(row.id);
    const paused = row.state === 'paused';
    if (held === undefined) {
      actions.push({ kind: 'start', row, paused });
      continue;
    }
    if (held.state === 'finished' || held.state === 'cancelled') continue;
    if (paused && held.state === 'active') actions.push({ kind: 'pause', runId: row.id });
    if (!paused && held.state === 'paused') actions.push({ kind: 'resume', runId: row.id });
    if (JSON.stringify(row.settings) !== held.settingsJson) actions.push({ kind: 'update', row });
  }
  for (const [runId, row] of closed) {
    const held = hosted.get(runId);
    if (held === undefined || held.state === 'finished' || held.state === 'cancelled') continue;
    // A run SQL does not know (the configured crawl of a scheduler, DEFAULT_RUN_ID) is not the master's.
    if (row !== null && row.state === 'cancelled') actions.push({ kind: 'cancel', runId });
  }
  return actions;
}
