import { placeholderList } from './statements.js';

/**
 * The statements of the schedule tables (migration 3), one set per dialect, bound positionally in
 * the order each comment gives. SQLite and PostgreSQL share `$n`, row values, LIMIT and
 * `ON CONFLICT DO NOTHING`; SQL Server takes `@vn`, TOP and the keyset spelled out with OR, and
 * its claim is a plain INSERT whose primary-key violation the repository reads as "taken".
 */
export interface ScheduleStatements {
  /** every schedule column, in SCHEDULE_COLUMNS order */
  scheduleInsert: string;
  /** job_id, expression, time_zone, overlap, misfire, enabled, updated_at */
  scheduleReplace: string;
  /** id */
  scheduleGet: string;
  /** job_id */
  scheduleGetByJob: string;
  /** cursor created_at, cursor id, limit: oldest first */
  scheduleList: string;
  /** job_id, enabled, updated_at */
  scheduleSetEnabled: string;
  /** job_id */
  scheduleDelete: string;
  /** id, next: only while none waits */
  scheduleWaitingFromNone: string;
  /** id, next, expected */
  scheduleWaitingSwap: string;

  /** every fire column, in FIRE_COLUMNS order; touches no row (or raises a conflict) when taken */
  fireClaim: string;
  /** schedule_id, fire_at, outcome, run_id */
  fireSettle: string;
  /** schedule_id, claimed before, fire_at since, limit: claims still `claimed`, oldest fire time first */
  fireStale: string;
  /** schedule_id, fire_at, claimed before, claimed_at, claimed_by: only while still `claimed` that long */
  fireReclaim: string;
  /** schedule_id, cursor fire_at, limit: newest first */
  fireList: string;
  /** schedule_id */
  fireDeleteBySchedule: string;
}

export const SCHEDULE_COLUMNS =
  'id, job_id, expression, time_zone, overlap, misfire, enabled, waiting_fire_at, created_at, updated_at';
export const FIRE_COLUMNS = 'schedule_id, fire_at, claimed_at, claimed_by, outcome, run_id, missed';

const REPLACE_SET =
  'expression = {2}, time_zone = {3}, overlap = {4}, misfire = {5}, enabled = {6}, updated_at = {7}';

const STALE_WHERE = (p: string): string =>
  `schedule_id = ${p}1 AND outcome = 'claimed' AND claimed_at < ${p}2 AND fire_at >= ${p}3`;

function common(p: (n: number) => string) {
  const fill = (template: string): string => template.replace(/\{(\d+)\}/g, (_, n: string) => p(Number(n)));
  return {
    scheduleInsert: `INSERT INTO schedules (${SCHEDULE_COLUMNS}) VALUES (${placeholderList(p, 1, 10)})`,
    scheduleReplace: `UPDATE schedules SET ${fill(REPLACE_SET)} WHERE job_id = ${p(1)}`,
    scheduleGet: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = ${p(1)}`,
    scheduleGetByJob: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE job_id = ${p(1)}`,
    scheduleSetEnabled: `UPDATE schedules SET enabled = ${p(2)}, updated_at = ${p(3)} WHERE job_id = ${p(1)}`,
    scheduleDelete: `DELETE FROM schedules WHERE job_id = ${p(1)}`,
    scheduleWaitingFromNone: `UPDATE schedules SET waiting_fire_at = ${p(2)} WHERE id = ${p(1)} AND waiting_fire_at IS NULL`,
    scheduleWaitingSwap: `UPDATE schedules SET waiting_fire_at = ${p(2)} WHERE id = ${p(1)} AND waiting_fire_at = ${p(3)}`,
    fireSettle: `UPDATE schedule_fires SET outcome = ${p(3)}, run_id = ${p(4)} WHERE schedule_id = ${p(1)} AND fire_at = ${p(2)}`,
    fireReclaim:
      `UPDATE schedule_fires SET claimed_at = ${p(4)}, claimed_by = ${p(5)} ` +
      `WHERE schedule_id = ${p(1)} AND fire_at = ${p(2)} AND outcome = 'claimed' AND claimed_at < ${p(3)}`,
    fireDeleteBySchedule: `DELETE FROM schedule_fires WHERE schedule_id = ${p(1)}`,
  };
}

const $ = (n: number): string => `$${n}`;

export const ANSI_SCHEDULE_STATEMENTS: ScheduleStatements = {
  ...common($),
  scheduleList: `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3`,
  fireClaim: `INSERT INTO schedule_fires (${FIRE_COLUMNS}) VALUES (${placeholderList($, 1, 7)}) ON CONFLICT (schedule_id, fire_at) DO NOTHING`,
  fireList: `SELECT ${FIRE_COLUMNS} FROM schedule_fires WHERE schedule_id = $1 AND fire_at < $2 ORDER BY fire_at DESC LIMIT $3`,
  fireStale: `SELECT ${FIRE_COLUMNS} FROM schedule_fires WHERE ${STALE_WHERE('$')} ORDER BY fire_at LIMIT $4`,
};

const v = (n: number): string => `@v${n}`;

export const MSSQL_SCHEDULE_STATEMENTS: ScheduleStatements = {
  ...common(v),
  scheduleList:
    `SELECT TOP (@v3) ${SCHEDULE_COLUMNS} FROM schedules ` +
    'WHERE (created_at > @v1 OR (created_at = @v1 AND id > @v2)) ORDER BY created_at, id',
  fireClaim: `INSERT INTO schedule_fires (${FIRE_COLUMNS}) VALUES (${placeholderList(v, 1, 7)})`,
  fireList: `SELECT TOP (@v3) ${FIRE_COLUMNS} FROM schedule_fires WHERE schedule_id = @v1 AND fire_at < @v2 ORDER BY fire_at DESC`,
  fireStale: `SELECT TOP (@v4) ${FIRE_COLUMNS} FROM schedule_fires WHERE ${STALE_WHERE('@v')} ORDER BY fire_at`,
};
