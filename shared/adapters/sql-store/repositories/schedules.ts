import { InvalidInputError } from '../../../errors.js';
import {
  FIRE_OUTCOMES,
  MISFIRE_POLICIES,
  OVERLAP_POLICIES,
  type FireOutcome,
  type FireRow,
  type ScheduleRepository,
  type ScheduleRow,
} from '../../../ports/sql-store.js';
import { HIGHEST, LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import type { SqlRow, SqlValue } from '../driver.js';
import { KEY_LENGTHS } from '../migrations.js';
import { key, limitOf, optionalKey, optionalWhole, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'schedules';
const FIRES = 'schedule-fires';

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function oneOf<T extends string>(field: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value)) {
    throw new InvalidInputError('SQL_INVALID_VALUE', `unknown ${field} '${String(value).slice(0, 40)}'`, {
      details: { field },
    });
  }
  return value;
}

export function toSchedule(r: SqlRow): ScheduleRow {
  return {
    id: String(r.id),
    jobId: String(r.job_id),
    expression: String(r.expression),
    timeZone: String(r.time_zone),
    overlap: String(r.overlap) as ScheduleRow['overlap'],
    misfire: String(r.misfire) as ScheduleRow['misfire'],
    enabled: r.enabled === true || r.enabled === 1 || r.enabled === '1',
    waitingFireAt: numOrNull(r.waiting_fire_at),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toFire(r: SqlRow): FireRow {
  return {
    scheduleId: String(r.schedule_id),
    fireAt: num(r.fire_at),
    claimedAt: num(r.claimed_at),
    claimedBy: String(r.claimed_by),
    outcome: String(r.outcome) as FireOutcome,
    runId: strOrNull(r.run_id),
    missed: num(r.missed),
  };
}

/** Schedules of jobs and their claimed fire times (docs/schedules.md). */
export function scheduleRepository(ctx: StoreContext): ScheduleRepository {
  const { driver, guard } = ctx;
  const sql = ctx.sql.schedules;
  const getByJob = async (jobId: string): Promise<ScheduleRow | null> => {
    const [row] = await driver.all(sql.scheduleGetByJob, [jobId]);
    return row === undefined ? null : toSchedule(row);
  };
  return {
    put: (s) =>
      guard('schedules.put', async () => {
        const fields: SqlValue[] = [
          key('expression', s.expression, KEY_LENGTHS.name),
          key('timeZone', s.timeZone, KEY_LENGTHS.code),
          oneOf('overlap', s.overlap, OVERLAP_POLICIES),
          oneOf('misfire', s.misfire, MISFIRE_POLICIES),
          s.enabled ? 1 : 0,
        ];
        const jobId = key('jobId', s.jobId);
        const updatedAt = whole('updatedAt', s.updatedAt);
        return driver.transaction(async (t) => {
          const replaced = await t.run(sql.scheduleReplace, [jobId, ...fields, updatedAt]);
          if (replaced === 0) {
            await t.run(sql.scheduleInsert, [
              key('id', s.id),
              jobId,
              ...fields,
              optionalWhole('waitingFireAt', s.waitingFireAt),
              whole('createdAt', s.createdAt),
              updatedAt,
            ]);
          }
          const [row] = await t.all(sql.scheduleGetByJob, [jobId]);
          if (row === undefined)
            throw new Error(`schedule of job ${jobId} vanished inside its own transaction`);
          return toSchedule(row);
        });
      }),

    get: (id) =>
      guard('schedules.get', async () => {
        const [row] = await driver.all(sql.scheduleGet, [id]);
        return row === undefined ? null : toSchedule(row);
      }),

    getByJob: (jobId) => guard('schedules.getByJob', () => getByJob(jobId)),

    list: (query) =>
      guard('schedules.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.scheduleList, [at, id, limit + 1]);
        return toPage(rows, limit, toSchedule, (s) => encodeCursor(LIST, [s.createdAt, s.id]));
      }),

    setEnabled: (jobId, enabled, at) =>
      guard('schedules.setEnabled', async () => {
        const changed = await driver.run(sql.scheduleSetEnabled, [jobId, enabled ? 1 : 0, whole('at', at)]);
        return changed === 0 ? null : getByJob(jobId);
      }),

    deleteByJob: (jobId) =>
      guard('schedules.deleteByJob', () =>
        driver.transaction(async (t) => {
          const [row] = await t.all(sql.scheduleGetByJob, [jobId]);
          if (row === undefined) return false;
          await t.run(sql.fireDeleteBySchedule, [String(row.id)]);
          return (await t.run(sql.scheduleDelete, [jobId])) > 0;
        }),
      ),

    claimFire: (fire) =>
      guard('schedules.claimFire', async () => {
        const params = [
          key('scheduleId', fire.scheduleId),
          whole('fireAt', fire.fireAt),
          whole('claimedAt', fire.claimedAt),
          key('claimedBy', fire.claimedBy),
          oneOf('outcome', fire.outcome, FIRE_OUTCOMES),
          optionalKey('runId', fire.runId),
          whole('missed', fire.missed),
        ];
        try {
          return (await driver.run(sql.fireClaim, params)) > 0;
        } catch (err) {
          // SQL Server's claim is a plain INSERT: the primary key refusing it means "taken".
          const mapped = driver.toError(err, 'schedules.claimFire');
          if (mapped.code === 'SQL_CONFLICT') return false;
          throw mapped;
        }
      }),

    settleFire: (scheduleId, fireAt, outcome, runId) =>
      guard('schedules.settleFire', async () => {
        await driver.run(sql.fireSettle, [
          scheduleId,
          whole('fireAt', fireAt),
          oneOf('outcome', outcome, FIRE_OUTCOMES),
          optionalKey('runId', runId),
        ]);
      }),

    staleClaims: (scheduleId, claimedBefore, since, limit) =>
      guard('schedules.staleClaims', async () => {
        const rows = await driver.all(sql.fireStale, [
          scheduleId,
          whole('claimedBefore', claimedBefore),
          whole('since', since),
          limitOf({ limit }),
        ]);
        return rows.map(toFire);
      }),

    reclaimFire: (scheduleId, fireAt, claimedBefore, claimedAt, claimedBy) =>
      guard('schedules.reclaimFire', async () => {
        const changed = await driver.run(sql.fireReclaim, [
          scheduleId,
          whole('fireAt', fireAt),
          whole('claimedBefore', claimedBefore),
          whole('claimedAt', claimedAt),
          key('claimedBy', claimedBy),
        ]);
        return changed > 0;
      }),

    lastFire: (scheduleId) =>
      guard('schedules.lastFire', async () => {
        const [row] = await driver.all(sql.fireList, [scheduleId, HIGHEST.number, 1]);
        return row === undefined ? null : toFire(row);
      }),

    listFires: (scheduleId, query) =>
      guard('schedules.listFires', async () => {
        const limit = limitOf(query);
        const [at] = query?.after ? decodeCursor(FIRES, query.after, ['number'] as const) : [HIGHEST.number];
        const rows = await driver.all(sql.fireList, [scheduleId, at, limit + 1]);
        return toPage(rows, limit, toFire, (f) => encodeCursor(FIRES, [f.fireAt]));
      }),

    swapWaiting: (scheduleId, expected, next) =>
      guard('schedules.swapWaiting', async () => {
        const to = optionalWhole('next', next);
        const changed =
          expected === null
            ? await driver.run(sql.scheduleWaitingFromNone, [scheduleId, to])
            : await driver.run(sql.scheduleWaitingSwap, [scheduleId, to, whole('expected', expected)]);
        return changed > 0;
      }),
  };
}
