import { AppError } from '../../../shared/errors.js';
import { RUN_HOSTS_DEFAULT_LIMIT } from '../../../shared/protocol/run-hosts.js';
import {
  FINAL_RUN_STATES,
  type RunRow,
  type RunState,
  type TokenRow,
} from '../../../shared/ports/sql-store.js';
import type { MasterAppDeps } from '../deps.js';
import { RUN_ACTIONS, createRun, notifySchedulers, type RunAction } from '../run-actions.js';
import { runView, shownState, storedStatesFor } from '../run-view.js';
import { explainUnhostedRun } from '../unhosted-why.js';
import { settingsShownTo } from '../settings-view.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery, toIso, toIsoOrNull } from '../schemas/common.js';
import {
  failureParams,
  failureSchema,
  failuresQuery,
  retrySchema,
  hostsQuery,
  runHostsSchema,
  runListQuery,
  runSchema,
  whyQuery,
  whySchema,
} from '../schemas/run.js';
import { requireJob } from './jobs.js';

function runNotFound(id: string): AppError {
  return new AppError('RUN_NOT_FOUND', `no run ${id}`);
}

export async function requireRun(deps: MasterAppDeps, id: string): Promise<RunRow> {
  const run = await deps.store.runs.get(id);
  if (run === null) throw runNotFound(id);
  return run;
}

/** Runs: executions of a job, and the commands that steer them. */
export function runRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { store } = deps;
  const view = (row: RunRow, caller: TokenRow | null) => ({
    ...runView(row, deps.clock.now(), deps.options.staleAfterMs),
    settings: settingsShownTo(caller, row.settings),
  });
  const notify = (command: Parameters<typeof deps.runControl.publish>[0]): Promise<void> =>
    notifySchedulers(deps, command);
  const listRuns = async (
    query: { limit?: number; after?: string; state?: RunState | RunState[] },
    caller: TokenRow | null,
    jobId?: string,
  ) => {
    const shown = query.state === undefined ? undefined : [query.state].flat();
    const page = await store.runs.list({
      limit: query.limit,
      after: query.after ?? null,
      ...(jobId === undefined ? {} : { jobId }),
      ...(shown === undefined ? {} : { states: storedStatesFor(shown) }),
    });
    const now = deps.clock.now();
    const items = page.items
      .filter(
        (row) => shown === undefined || shown.includes(shownState(row, now, deps.options.staleAfterMs).state),
      )
      .map((row) => view(row, caller));
    return { items, next: page.next };
  };

  const action = (name: RunAction, summary: string) =>
    route({
      method: 'post',
      path: `/runs/:id/${name}`,
      operationId: `${name}Run`,
      summary,
      tag: 'runs',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The run after the change.', schema: runSchema } },
      errors: { 409: 'RUN_STATE_CONFLICT' },
      async handle({ params, caller }) {
        const run = await requireRun(deps, params.id);
        const rule = RUN_ACTIONS[name];
        const now = deps.clock.now();
        const changed = rule.from.includes(run.state)
          ? await store.runs.transition(
              run.id,
              rule.from,
              rule.to(run),
              name === 'cancel' ? { endedAt: now, error: `cancelled by ${caller?.name ?? 'a token'}` } : {},
            )
          : null;
        if (changed === null) {
          const current = (await store.runs.get(run.id)) ?? run;
          throw new AppError(
            'RUN_STATE_CONFLICT',
            `run ${run.id} is ${current.state}: ${name} needs a run that is ${rule.from.join(' or ')}`,
          );
        }
        await notify({ type: name, runId: run.id });
        return { status: 200, body: view(changed, caller) };
      },
    });

  return [
    route({
      method: 'post',
      path: '/jobs/:id/runs',
      operationId: 'startRun',
      summary: "Start a run of a job (queued until a scheduler takes it; a snapshot of the job's settings)",
      tag: 'runs',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: { 201: { description: 'The new run.', schema: runSchema } },
      async handle({ params, caller }) {
        const job = await requireJob(deps, params.id);
        const row = await createRun(deps, job);
        return { status: 201, body: view(row, caller) };
      },
    }),
    route({
      method: 'get',
      path: '/jobs/:id/runs',
      operationId: 'listJobRuns',
      summary: "A job's runs, newest first, paged",
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: pageQuery.extend(runListQuery.shape),
      lookup: true,
      responses: { 200: { description: 'A page of runs.', schema: pageOf(runSchema) } },
      async handle({ params, query, caller }) {
        const job = await requireJob(deps, params.id);
        return { status: 200, body: await listRuns(query, caller, job.id) };
      },
    }),
    route({
      method: 'get',
      path: '/runs',
      operationId: 'listRuns',
      summary: 'Every run, newest first, paged',
      tag: 'runs',
      scope: 'read',
      query: pageQuery.extend(runListQuery.shape),
      responses: { 200: { description: 'A page of runs.', schema: pageOf(runSchema) } },
      async handle({ query, caller }) {
        return { status: 200, body: await listRuns(query, caller) };
      },
    }),
    route({
      method: 'get',
      path: '/runs/:id',
      operationId: 'getRun',
      summary: 'One run: its state and counters',
      tag: 'runs',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The run.', schema: runSchema } },
      async handle({ params, caller }) {
        return { status: 200, body: view(await requireRun(deps, params.id), caller) };
      },
    }),
    route({
      method: 'delete',
      path: '/runs/:id',
      operationId: 'deleteRun',
      summary: 'Delete an ended run with its failure log and results (its job stays)',
      tag: 'runs',
      scope: 'admin',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 409: 'RUN_STATE_CONFLICT' },
      async handle({ params }) {
        const run = await requireRun(deps, params.id);
        if (!(await store.runs.delete(run.id, FINAL_RUN_STATES))) {
          const current = await store.runs.get(run.id);
          if (current === null) throw runNotFound(run.id);
          throw new AppError(
            'RUN_STATE_CONFLICT',
            `run ${run.id} is ${current.state}: only a run that ended (${FINAL_RUN_STATES.join(', ')}) is deleted; cancel it first`,
          );
        }
        return { status: 204 };
      },
    }),
    action('pause', 'Pause a run: its dispatch stops, its queued work stays'),
    action('resume', 'Resume a paused run'),
    action('cancel', 'Cancel a run: its queued work is dropped and it ends cancelled'),
    route({
      method: 'get',
      path: '/runs/:id/failures',
      operationId: 'listRunFailures',
      summary: "The run's failures (retries and final failures) with their last error, oldest first, paged",
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: pageQuery.extend(failuresQuery.shape),
      lookup: true,
      responses: { 200: { description: 'A page of failures.', schema: pageOf(failureSchema) } },
      async handle({ params, query }) {
        const run = await requireRun(deps, params.id);
        const page = await store.logs.list(run.id, {
          limit: query.limit,
          after: query.after ?? null,
          finalOnly: query.final === 'true',
        });
        const items = page.items.map((row) => ({
          id: row.id,
          url: row.url,
          code: row.code,
          attempts: row.attempts,
          lastError: row.lastError,
          final: row.final,
          at: toIso(row.at),
          retriedAt: toIsoOrNull(row.retriedAt),
          requeuedAt: toIsoOrNull(row.requeuedAt),
        }));
        return { status: 200, body: { items, next: page.next } };
      },
    }),
    route({
      method: 'post',
      path: '/runs/:id/failures/:failureId/retry',
      operationId: 'retryRunFailure',
      summary:
        "Send a final failure back to its run: its URL is fetched again as a fresh task, past the run's dedup (once)",
      tag: 'runs',
      scope: 'operate',
      params: failureParams,
      lookup: true,
      responses: {
        202: { description: 'Accepted: durable in SQL, queued at the next sync.', schema: retrySchema },
      },
      errors: { 404: 'FAILURE_NOT_FOUND', 409: 'FAILURE_NOT_FINAL' },
      async handle({ params }) {
        const run = await requireRun(deps, params.id);
        const failure = await store.logs.get(params.failureId);
        if (failure === null || failure.runId !== run.id) {
          throw new AppError('FAILURE_NOT_FOUND', `no failure ${params.failureId} in run ${run.id}`);
        }
        if (FINAL_RUN_STATES.includes(run.state)) {
          throw new AppError(
            'RUN_STATE_CONFLICT',
            `run ${run.id} is ${run.state}: a failure can be retried only while the run is queued, running or paused`,
          );
        }
        if (!failure.final) {
          throw new AppError(
            'FAILURE_NOT_FINAL',
            `failure ${failure.id} of run ${run.id} is a retry the run makes itself, not a final failure`,
          );
        }
        // The mark in SQL is the retry: the run's scheduler queues the URL from it (a crash of
        // either side costs latency, never the retry). A second call finds it marked: a no-op.
        await store.logs.markRetried(failure.id, deps.clock.now());
        const marked = (await store.logs.get(failure.id)) ?? failure;
        await notify({ type: 'retry', runId: run.id });
        return {
          status: 202,
          body: {
            runId: run.id,
            url: failure.url,
            failureId: failure.id,
            retriedAt: toIso(marked.retriedAt ?? deps.clock.now()),
          },
        };
      },
    }),
    route({
      method: 'get',
      path: '/runs/:id/why',
      operationId: 'whyNotYet',
      summary:
        'Why not yet? Where a URL is in the run and what it waits for (asked of its scheduler; a queued or ended run is answered from SQL)',
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: whyQuery,
      lookup: true,
      responses: {
        200: {
          description:
            "The scheduler's answer; for a queued or ended run, the master's, from the run's scope and logged failures.",
          schema: whySchema,
        },
      },
      errors: { 503: 'NO_SCHEDULER' },
      async handle({ params, query }) {
        const run = await requireRun(deps, params.id);
        if (run.state === 'queued' || FINAL_RUN_STATES.includes(run.state))
          return { status: 200, body: await explainUnhostedRun(run, query.url, store.logs) };
        return {
          status: 200,
          body: await deps.why.explain({ runId: run.id, schedulerId: run.schedulerId, url: query.url }),
        };
      },
    }),
    route({
      method: 'get',
      path: '/runs/:id/hosts',
      operationId: 'listRunHosts',
      summary: "The run's busiest hosts and their politeness now (asked of the scheduler hosting the run)",
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: hostsQuery,
      lookup: true,
      responses: { 200: { description: "The scheduler's answer.", schema: runHostsSchema } },
      errors: { 503: 'NO_SCHEDULER' },
      async handle({ params, query }) {
        const run = await requireRun(deps, params.id);
        const none = (note: string) => ({
          status: 200 as const,
          body: { runId: run.id, at: toIso(deps.clock.now()), items: [], note },
        });
        if (FINAL_RUN_STATES.includes(run.state))
          return none(`the run is ${run.state}: no host is busy for it`);
        if (run.state === 'queued') return none('the run is queued: no scheduler has taken it yet');
        const answer = await deps.hosts.top({ runId: run.id, limit: query.limit ?? RUN_HOSTS_DEFAULT_LIMIT });
        return answer === null
          ? none('no scheduler hosts the run right now (it may be moving to another scheduler)')
          : { status: 200, body: answer };
      },
    }),
  ];
}
