import { z } from 'zod';
import {
  FIRE_OUTCOMES,
  MISFIRE_POLICIES,
  OVERLAP_POLICIES,
  type FireRow,
  type ScheduleRow,
} from '../../../shared/ports/sql-store.js';
import { isoTime, toIso, toIsoOrNull } from './common.js';

/** `PUT /jobs/{id}/schedule`: the whole schedule (what is left out takes its default). */
export const schedulePutSchema = z
  .strictObject({
    expression: z
      .string()
      .min(1)
      .max(200)
      .describe(
        'A cron expression as node-cron reads it: 5 fields, or 6 with seconds first (`*/10 * * * * *`).',
      ),
    timeZone: z.string().min(1).max(100).default('UTC').describe('IANA time zone the expression is read in.'),
    overlap: z
      .enum(OVERLAP_POLICIES)
      .default('skip')
      .describe(
        'While a run of the job is not final: skip the fire time, queue one behind it, or allow another.',
      ),
    misfire: z
      .enum(MISFIRE_POLICIES)
      .default('run-once')
      .describe('Fire times missed while no master was up: one run for all of them, or none.'),
    enabled: z.boolean().default(true).describe('False: saved but paused.'),
  })
  .describe("A job's cron schedule.");

export const scheduleQuery = z.strictObject({
  next: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .optional()
    .describe('How many next fire times to list (default 5).'),
});

export const fireSchema = z.object({
  fireAt: isoTime,
  claimedAt: isoTime,
  claimedBy: z.string().describe('The master process that claimed the fire time.'),
  outcome: z.enum(FIRE_OUTCOMES),
  runId: z
    .string()
    .nullable()
    .describe('The run it started, if it did; while `claimed`, the id its run will get.'),
  missed: z.number().int().describe('Missed fire times folded into this one (misfire run-once or skip).'),
});

export const scheduleSchema = z.object({
  id: z.string(),
  jobId: z.string(),
  expression: z.string(),
  timeZone: z.string(),
  overlap: z.enum(OVERLAP_POLICIES),
  misfire: z.enum(MISFIRE_POLICIES),
  enabled: z.boolean(),
  waitingFireAt: isoTime.nullable().describe('The fire time queued behind an active run (overlap queue).'),
  nextFireTimes: z.array(isoTime).describe('The next fire times (none while paused).'),
  lastFire: fireSchema.nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export function fireView(row: FireRow): z.input<typeof fireSchema> {
  return {
    fireAt: toIso(row.fireAt),
    claimedAt: toIso(row.claimedAt),
    claimedBy: row.claimedBy,
    outcome: row.outcome,
    runId: row.runId,
    missed: row.missed,
  };
}

export function scheduleView(
  row: ScheduleRow,
  nextFireTimes: readonly number[],
  lastFire: FireRow | null,
): z.input<typeof scheduleSchema> {
  return {
    id: row.id,
    jobId: row.jobId,
    expression: row.expression,
    timeZone: row.timeZone,
    overlap: row.overlap,
    misfire: row.misfire,
    enabled: row.enabled,
    waitingFireAt: toIsoOrNull(row.waitingFireAt),
    nextFireTimes: nextFireTimes.map(toIso),
    lastFire: lastFire === null ? null : fireView(lastFire),
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}
