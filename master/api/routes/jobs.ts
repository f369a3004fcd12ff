import {
  CrawlSettingsSchema,
  mergeCrawlSettings,
  settingsProblems,
  type CrawlSettings,
} from '../../../shared/crawl-settings/index.js';
import { AppError } from '../../../shared/errors.js';
import type { JobRow } from '../../../shared/ports/sql-store.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import { jobCreateSchema, jobPatchSchema, jobSchema, jobView } from '../schemas/job.js';
import { isConflict } from '../store-errors.js';
import { invalidRequest } from '../validation.js';

const ACTIVE = ['queued', 'running', 'paused'] as const;

export function jobNotFound(id: string): AppError {
  return new AppError('JOB_NOT_FOUND', `no job ${id}`);
}

function nameTaken(name: string): AppError {
  return new AppError('JOB_NAME_TAKEN', `a job named '${name}' exists already; choose another name`);
}

export async function requireJob(deps: MasterAppDeps, id: string): Promise<JobRow> {
  const job = await deps.store.jobs.get(id);
  if (job === null) throw jobNotFound(id);
  return job;
}

/** Jobs: saved crawl definitions (a name plus the settings of shared/crawl-settings). */
export function jobRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { store } = deps;
  return [
    route({
      method: 'post',
      path: '/jobs',
      operationId: 'createJob',
      summary: 'Save a job: a name plus the settings of a crawl',
      tag: 'jobs',
      scope: 'operate',
      body: jobCreateSchema,
      responses: { 201: { description: 'The job, defaults filled in.', schema: jobSchema } },
      errors: { 409: 'JOB_NAME_TAKEN' },
      async handle({ body, caller }) {
        const { name, ...settings } = body;
        const now = deps.clock.now();
        try {
          const row = await store.jobs.create({
            id: deps.newId(),
            name,
            settings,
            createdAt: now,
            updatedAt: now,
          });
          return { status: 201, body: jobView(row, caller) };
        } catch (err) {
          if (isConflict(err)) throw nameTaken(name);
          throw err;
        }
      },
    }),
    route({
      method: 'get',
      path: '/jobs',
      operationId: 'listJobs',
      summary: 'The jobs, oldest first, paged',
      tag: 'jobs',
      scope: 'read',
      query: pageQuery,
      responses: { 200: { description: 'A page of jobs.', schema: pageOf(jobSchema) } },
      async handle({ query, caller }) {
        const page = await store.jobs.list({ limit: query.limit, after: query.after ?? null });
        return {
          status: 200,
          body: { items: page.items.map((row) => jobView(row, caller)), next: page.next },
        };
      },
    }),
    route({
      method: 'get',
      path: '/jobs/:id',
      operationId: 'getJob',
      summary: 'One job',
      tag: 'jobs',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The job.', schema: jobSchema } },
      async handle({ params, caller }) {
        return { status: 200, body: jobView(await requireJob(deps, params.id), caller) };
      },
    }),
    route({
      method: 'patch',
      path: '/jobs/:id',
      operationId: 'updateJob',
      summary: "Change a job's name or settings (its runs keep theirs)",
      tag: 'jobs',
      scope: 'operate',
      params: idParams,
      body: jobPatchSchema,
      lookup: true,
      responses: { 200: { description: 'The job as it is now.', schema: jobSchema } },
      errors: { 409: 'JOB_NAME_TAKEN' },
      async handle({ params, body, caller }) {
        const job = await requireJob(deps, params.id);
        const { name, ...patch } = body;
        // The whole is validated again: a job saved by an older version gets the new defaults, and
        // a rule across fields sees the merged values.
        const merged = CrawlSettingsSchema.safeParse(
          mergeCrawlSettings(job.settings as CrawlSettings, patch),
        );
        if (!merged.success) throw invalidRequest(settingsProblems(merged.error));
        const settings = merged.data;
        try {
          const row = await store.jobs.update(job.id, {
            ...(name === undefined ? {} : { name }),
            settings,
            updatedAt: deps.clock.now(),
          });
          if (row === null) throw jobNotFound(params.id);
          return { status: 200, body: jobView(row, caller) };
        } catch (err) {
          if (isConflict(err) && name !== undefined) throw nameTaken(name);
          throw err;
        }
      },
    }),
    route({
      method: 'delete',
      path: '/jobs/:id',
      operationId: 'deleteJob',
      summary: 'Delete a job (its finished runs stay, as history)',
      tag: 'jobs',
      scope: 'admin',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 409: 'JOB_HAS_ACTIVE_RUNS' },
      async handle({ params }) {
        const job = await requireJob(deps, params.id);
        const active = await store.runs.list({ jobId: job.id, states: ACTIVE, limit: 1 });
        if (active.items.length > 0) {
          throw new AppError(
            'JOB_HAS_ACTIVE_RUNS',
            `job ${job.id} has runs that are not finished (${active.items[0]?.id} is ${active.items[0]?.state}); cancel them first`,
          );
        }
        if (!(await store.jobs.delete(job.id))) throw jobNotFound(params.id);
        // Its schedule goes with it (a schedule of a deleted job could only skip its fire times).
        if (await store.schedules.deleteByJob(job.id)) deps.onScheduleChange?.();
        return { status: 204 };
      },
    }),
  ];
}
