import { AppError, InvalidInputError } from '../../../shared/errors.js';
import type { ScheduleRow } from '../../../shared/ports/sql-store.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import {
  fireSchema,
  fireView,
  schedulePutSchema,
  scheduleQuery,
  scheduleSchema,
  scheduleView,
} from '../schemas/schedule.js';
import { requireJob } from './jobs.js';

const DEFAULT_NEXT = 5;

function scheduleNotFound(jobId: string): AppError {
  return new AppError(
    'SCHEDULE_NOT_FOUND',
    `job ${jobId} has no schedule; PUT /api/v1/jobs/${jobId}/schedule makes one`,
  );
}

/** A job's cron schedule (docs/schedules.md); the master's schedule loop fires it. */
export function scheduleRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { store, cron } = deps;
  const changed = (): void => deps.onScheduleChange?.();
  const view = async (row: ScheduleRow, next = DEFAULT_NEXT) =>
    scheduleView(
      row,
      row.enabled && next > 0 ? cron.next(row.expression, row.timeZone, deps.clock.now(), next) : [],
      await store.schedules.lastFire(row.id),
    );
  const requireSchedule = async (jobId: string): Promise<ScheduleRow> => {
    await requireJob(deps, jobId);
    const row = await store.schedules.getByJob(jobId);
    if (row === null) throw scheduleNotFound(jobId);
    return row;
  };
  const toggle = (name: 'pause' | 'resume') =>
    route({
      method: 'post',
      path: `/jobs/:id/schedule/${name}`,
      operationId: `${name}Schedule`,
      summary:
        name === 'pause'
          ? "Pause a job's schedule: no fire time starts a run until resumed"
          : "Resume a job's schedule (fire times while it was paused are not missed ones)",
      tag: 'schedules',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The schedule after the change.', schema: scheduleSchema } },
      async handle({ params }) {
        await requireSchedule(params.id);
        const row = await store.schedules.setEnabled(params.id, name === 'resume', deps.clock.now());
        if (row === null) throw scheduleNotFound(params.id);
        changed();
        return { status: 200, body: await view(row) };
      },
    });

  return [
    route({
      method: 'put',
      path: '/jobs/:id/schedule',
      operationId: 'putSchedule',
      summary: "Set a job's cron schedule: expression, time zone, overlap and misfire policies",
      tag: 'schedules',
      scope: 'operate',
      params: idParams,
      body: schedulePutSchema,
      lookup: true,
      responses: { 200: { description: 'The schedule, with its next fire times.', schema: scheduleSchema } },
      async handle({ params, body }) {
        const job = await requireJob(deps, params.id);
        const problems = cron.problems(body.expression, body.timeZone);
        if (problems.length > 0) {
          throw new InvalidInputError(
            'INVALID_SCHEDULE',
            `the schedule does not validate: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
            { details: { problems } },
          );
        }
        const now = deps.clock.now();
        const row = await store.schedules.put({
          id: deps.newId(),
          jobId: job.id,
          ...body,
          waitingFireAt: null,
          createdAt: now,
          updatedAt: now,
        });
        changed();
        return { status: 200, body: await view(row) };
      },
    }),
    route({
      method: 'get',
      path: '/jobs/:id/schedule',
      operationId: 'getSchedule',
      summary: "A job's schedule, its next fire times and the last one claimed",
      tag: 'schedules',
      scope: 'read',
      params: idParams,
      query: scheduleQuery,
      lookup: true,
      responses: { 200: { description: 'The schedule.', schema: scheduleSchema } },
      async handle({ params, query }) {
        return {
          status: 200,
          body: await view(await requireSchedule(params.id), query.next ?? DEFAULT_NEXT),
        };
      },
    }),
    route({
      method: 'delete',
      path: '/jobs/:id/schedule',
      operationId: 'deleteSchedule',
      summary: "Remove a job's schedule (runs it started stay)",
      tag: 'schedules',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Removed.' } },
      async handle({ params }) {
        await requireSchedule(params.id);
        if (!(await store.schedules.deleteByJob(params.id))) throw scheduleNotFound(params.id);
        changed();
        return { status: 204 };
      },
    }),
    toggle('pause'),
    toggle('resume'),
    route({
      method: 'get',
      path: '/jobs/:id/schedule/fires',
      operationId: 'listScheduleFires',
      summary:
        'The fire times the schedule claimed and what each became (a run, waiting, skipped, missed), newest first, paged',
      tag: 'schedules',
      scope: 'read',
      params: idParams,
      query: pageQuery,
      lookup: true,
      responses: { 200: { description: 'A page of fire times.', schema: pageOf(fireSchema) } },
      async handle({ params, query }) {
        const row = await requireSchedule(params.id);
        const page = await store.schedules.listFires(row.id, {
          limit: query.limit,
          after: query.after ?? null,
        });
        return { status: 200, body: { items: page.items.map(fireView), next: page.next } };
      },
    }),
  ];
}
