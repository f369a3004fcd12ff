import { z } from 'zod';
import { AppError } from '../../../shared/errors.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';

export const healthSchema = z.object({ status: z.literal('ok'), store: z.literal('ok') });

/** Open routes: whether the master answers. (The OpenAPI document is served by the app itself.) */
export function healthRoute(deps: MasterAppDeps): RouteSpec {
  return route({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Whether the master and its SQL store answer (open)',
    tag: 'meta',
    scope: null,
    responses: { 200: { description: 'Up.', schema: healthSchema } },
    errors: { 503: 'STORE_UNAVAILABLE' },
    async handle() {
      const ok = await deps.store.ping().catch(() => false);
      if (!ok) throw new AppError('STORE_UNAVAILABLE', "the master's SQL store does not answer");
      return { status: 200, body: { status: 'ok', store: 'ok' } };
    },
  });
}
