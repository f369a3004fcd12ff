import { AppError } from '../../../shared/errors.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { alertListQuery, alertSchema, alertView } from '../schemas/alert.js';
import { idParams, pageOf } from '../schemas/common.js';

/** Alerts: active and past, as the engine recorded them. */
export function alertRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { alerts } = deps.store;
  return [
    route({
      method: 'get',
      path: '/alerts',
      operationId: 'listAlerts',
      summary: 'Alerts, newest first, paged; ?state=active for those that hold now',
      tag: 'alerts',
      scope: 'read',
      query: alertListQuery,
      responses: { 200: { description: 'A page of alerts.', schema: pageOf(alertSchema) } },
      async handle({ query }) {
        const states = query.state === undefined ? undefined : [query.state].flat();
        const page = await alerts.list({
          limit: query.limit,
          after: query.after ?? null,
          ...(states === undefined ? {} : { states }),
        });
        return { status: 200, body: { items: page.items.map(alertView), next: page.next } };
      },
    }),
    route({
      method: 'get',
      path: '/alerts/:id',
      operationId: 'getAlert',
      summary: 'One alert',
      tag: 'alerts',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The alert.', schema: alertSchema } },
      async handle({ params }) {
        const row = await alerts.get(params.id);
        if (row === null) throw new AppError('ALERT_NOT_FOUND', `no alert ${params.id}`);
        return { status: 200, body: alertView(row) };
      },
    }),
  ];
}
