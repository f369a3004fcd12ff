import Router from '@koa/router';
import Koa from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/http/error-responses.js';
import { bearerToken } from '../../shared/http/bearer.js';
import { requestGuards, type HostPolicy } from '../../shared/http/request-guards.js';
import type { Logger } from '../../shared/logger.js';
import type { DesiredState, ProcessReport } from '../../shared/protocol/agent.js';
import type { Registry } from '../../shared/metrics/registry.js';
import { metricsRoute } from '../../shared/metrics/route.js';

export interface AgentAppDeps {
  agentId: string;
  /** The agent credential (the master presents it). */
  token: string;
  hosts: HostPolicy;
  logger: Logger;
  processes: () => ProcessReport[];
  desired: () => DesiredState | null;
  /** Send a heartbeat now and take the master's answer. */
  sync: () => void;
  /**
   * The process's metrics (client/agent/metrics.ts adds its crawlers'), served at `GET /metrics`
   * with the agent credential. Absent: no such route.
   */
  metrics?: Registry;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * The agent's API, built without listen(): `GET /health` (open), and with the agent credential
 * `GET /api/v1/status` (its processes and what the master last asked), `GET /metrics` (Prometheus
 * text, its crawler processes' numbers included: docs/metrics.md) and `POST /api/v1/sync`
 * (the master's nudge: a heartbeat now, whose answer carries a change). Commands themselves come
 * only as the master's desired state, kept in SQL, so a master restart loses none.
 */
export function createAgentApp(deps: AgentAppDeps): Koa {
  const app = new Koa();
  app.use(errorResponses(deps.logger, { service: 'agent', routesHint: 'see docs/fleet.md' }));
  app.use(requestGuards(deps.hosts));
  const expected = digest(deps.token);
  const authorize = (authorization: string | undefined): void => {
    const given = bearerToken(authorization);
    if (given === null || !timingSafeEqual(digest(given), expected)) {
      throw new AppError(
        'UNAUTHORIZED',
        'the agent credential is required (Authorization: Bearer <agent token>)',
      );
    }
  };
  if (deps.metrics)
    app.use(metricsRoute(deps.metrics, (ctx) => authorize(ctx.get('authorization') || undefined)));
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok', agentId: deps.agentId };
  });
  router.get('/api/v1/status', (ctx) => {
    authorize(ctx.get('authorization') || undefined);
    ctx.body = { agentId: deps.agentId, processes: deps.processes(), desired: deps.desired() };
  });
  router.post('/api/v1/sync', (ctx) => {
    authorize(ctx.get('authorization') || undefined);
    deps.sync();
    ctx.status = 202;
    ctx.body = { status: 'syncing' };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.silent = true;
  return app;
}
