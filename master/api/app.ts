import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { errorResponses } from '../../shared/http/error-responses.js';
import { readJsonBody } from '../../shared/http/json-body.js';
import { requestGuards } from '../../shared/http/request-guards.js';
import { metricsRoute } from '../../shared/metrics/route.js';
import { requireAgent } from './auth/agent-auth.js';
import { createAuthenticator } from './auth/authenticate.js';
import type { MasterAppDeps } from './deps.js';
import { API_PREFIX, buildOpenApi } from './openapi.js';
import { route, type RouteSpec } from './route-spec.js';
import { alertRuleRoutes } from './routes/alert-rules.js';
import { alertRoutes } from './routes/alerts.js';
import { agentLinkRoutes } from './routes/agent-link.js';
import { agentRoutes } from './routes/agents.js';
import { healthRoute } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { runRoutes } from './routes/runs.js';
import { resultRoutes } from './routes/results.js';
import { scheduleRoutes } from './routes/schedules.js';
import { tokenRoutes } from './routes/tokens.js';
import { webhookRoutes } from './routes/webhooks.js';
import { parseInput } from './validation.js';
import { dashboardAssets } from '../dashboard/assets.js';
import { liveRoute } from '../dashboard/live-route.js';

export const API_VERSION = '1.0.0';

/** Every route of the API, as declared (the router and the OpenAPI document are made from it). */
export function masterRoutes(deps: MasterAppDeps): RouteSpec[] {
  const routes: RouteSpec[] = [
    healthRoute(deps),
    ...jobRoutes(deps),
    ...runRoutes(deps),
    ...resultRoutes(deps),
    ...scheduleRoutes(deps),
    ...tokenRoutes(deps),
    ...alertRuleRoutes(deps),
    ...alertRoutes(deps),
    ...webhookRoutes(deps),
    ...agentRoutes(deps),
    ...agentLinkRoutes(deps),
    ...(deps.dashboard ? [liveRoute(deps.dashboard.live)] : []),
  ];
  let document: Record<string, unknown> | null = null;
  routes.push(
    route({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApi',
      summary: 'This document: OpenAPI 3.1, made from the schemas that validate the requests (open)',
      tag: 'meta',
      scope: null,
      responses: { 200: { description: 'The OpenAPI document.' } },
      async handle() {
        document ??= buildOpenApi(routes, API_VERSION);
        return { status: 200, body: document };
      },
    }),
  );
  return routes;
}

/**
 * The master's management API as a Koa app that does not listen (master/main.ts serves it, tests
 * drive `app.callback()`). Everything is under /api/v1 (see docs/master-api.md and the OpenAPI
 * document at /api/v1/openapi.json). Every request passes the Host check (DNS rebinding) and the
 * cross-origin check first, then the route's token scope (`GET /metrics`, the Prometheus text of
 * docs/metrics.md, needs the read scope), then its path, query and body schemas.
 * The API only reads and writes the SQL store and sends run commands: job settings are data.
 */
export function createMasterApp(deps: MasterAppDeps): Koa {
  const app = new Koa();
  const auth = createAuthenticator({
    tokens: deps.store.tokens,
    now: () => deps.clock.now(),
    logger: deps.logger,
  });
  app.use(
    errorResponses(deps.logger, { service: 'master', routesHint: `see GET ${API_PREFIX}/openapi.json` }),
  );
  app.use(requestGuards(deps.options.hosts));
  if (deps.dashboard) app.use(dashboardAssets(deps.dashboard.assetsDir));
  if (deps.metrics) app.use(metricsRoute(deps.metrics, (ctx) => auth.require(ctx, 'read')));
  const router = new Router({ prefix: API_PREFIX });
  for (const spec of masterRoutes(deps)) {
    router[spec.method](spec.path, async (ctx: Context & { params: Record<string, string> }) => {
      // Credentials first: nothing of a body is read for a caller who may not send it.
      let caller = null;
      if (spec.scope === 'agent') requireAgent(ctx, deps.fleet?.agentTokenHash);
      else if (spec.scope !== null) caller = await auth.require(ctx, spec.scope);
      const params = spec.params ? parseInput(spec.params, { ...ctx.params }, 'path') : {};
      const query = spec.query ? parseInput(spec.query, { ...ctx.query }, 'query') : {};
      const body = spec.body
        ? parseInput(spec.body, await readJsonBody(ctx, deps.options.maxBodyBytes), 'body')
        : undefined;
      const result = await spec.handle({ params, query, body, caller, ctx });
      ctx.status = result.status;
      if (result.body !== undefined) ctx.body = result.body;
    });
  }
  app.use(router.routes());
  app.use(router.allowedMethods());
  // Errors are answered by errorResponses; Koa's own handler would print stack traces to stderr.
  app.silent = true;
  return app;
}
