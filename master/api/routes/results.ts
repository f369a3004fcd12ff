import type { MasterAppDeps } from '../deps.js';
import { exportResults, resultPages } from '../results-export.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import { exportQuery, resultSchema, resultsQuery, resultView } from '../schemas/result.js';
import { requireRun } from './runs.js';

const MEDIA_TYPES = { jsonl: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

/** A run's results: what `ackcrawl extract` cleaned of its pages (the SQL `results` table). */
export function resultRoutes(deps: MasterAppDeps): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/runs/:id/results',
      operationId: 'listRunResults',
      summary: "The run's cleaned results (ackcrawl extract), in the order they were written, paged",
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: pageQuery.extend(resultsQuery.shape),
      lookup: true,
      responses: { 200: { description: 'A page of results.', schema: pageOf(resultSchema) } },
      async handle({ params, query }) {
        const run = await requireRun(deps, params.id);
        const page = await deps.store.results.list(run.id, {
          limit: query.limit,
          after: query.after ?? null,
        });
        const withText = query.text === 'true';
        return {
          status: 200,
          body: { items: page.items.map((row) => resultView(row, withText)), next: page.next },
        };
      },
    }),
    route({
      method: 'get',
      path: '/runs/:id/results/export',
      operationId: 'exportRunResults',
      summary: 'Every result of the run as one file (JSON Lines or CSV), streamed from SQL',
      tag: 'runs',
      scope: 'read',
      params: idParams,
      query: exportQuery,
      lookup: true,
      responses: {
        200: {
          description: 'The file, as an attachment named after the run.',
          mediaTypes: Object.values(MEDIA_TYPES),
        },
      },
      async handle({ params, query, ctx }) {
        const run = await requireRun(deps, params.id);
        const format = query.format ?? 'jsonl';
        ctx.type = MEDIA_TYPES[format];
        ctx.set('content-disposition', `attachment; filename="run-${run.id}-results.${format}"`);
        ctx.set('cache-control', 'no-store');
        const pages = resultPages(deps.store.results, run.id);
        return { status: 200, body: exportResults(pages, format, query.text !== 'false') };
      },
    }),
  ];
}
