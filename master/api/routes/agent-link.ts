import { z } from 'zod';
import { AppError } from '../../../shared/errors.js';
import {
  agentHeartbeatSchema,
  agentRegisterSchema,
  desiredStateSchema,
} from '../../../shared/protocol/agent.js';
import { DEFAULT_AGENT_HEARTBEAT_MS, desiredState } from '../../fleet/fleet-view.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams } from '../schemas/common.js';

const agentIdParams = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._:@-]+$/, 'letters, digits and . _ : @ -')
    .describe("The agent's id (ACKCRAWL_AGENT_ID; by default host name and port)."),
});

/**
 * The routes host agents call, with the agent credential: register, heartbeat, goodbye. Each
 * answer is the agent's desired state as SQL holds it, which the agent reconciles.
 */
export function agentLinkRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { agents } = deps.store;
  const heartbeatMs = deps.options.agentHeartbeatMs ?? DEFAULT_AGENT_HEARTBEAT_MS;
  const desired = { 200: { description: 'What the master wants of the agent.', schema: desiredStateSchema } };
  return [
    route({
      method: 'post',
      path: '/agents/:id/register',
      operationId: 'registerAgent',
      summary: 'An agent says it is up (at start, and when the master does not know it)',
      tag: 'agent link',
      scope: 'agent',
      params: agentIdParams,
      body: agentRegisterSchema,
      responses: desired,
      async handle({ params, body }) {
        const row = await agents.register({
          id: params.id,
          name: body.name,
          hostname: body.hostname,
          url: body.url,
          facts: body.facts,
          at: deps.clock.now(),
          desiredProcesses: body.processes,
        });
        deps.logger.info(
          { agentId: row.id, url: row.url, desiredProcesses: row.desiredProcesses },
          'agent registered',
        );
        return { status: 200, body: desiredState(row, heartbeatMs) };
      },
    }),
    route({
      method: 'post',
      path: '/agents/:id/heartbeat',
      operationId: 'agentHeartbeat',
      summary: "An agent's heartbeat: host facts and every crawler process",
      tag: 'agent link',
      scope: 'agent',
      params: agentIdParams,
      body: agentHeartbeatSchema,
      lookup: true,
      responses: desired,
      async handle({ params, body }) {
        const row = await agents.heartbeat(params.id, {
          facts: body.facts,
          at: deps.clock.now(),
          processes: body.processes,
        });
        if (row === null) throw new AppError('AGENT_NOT_FOUND', `no agent ${params.id}: register first`);
        return { status: 200, body: desiredState(row, heartbeatMs) };
      },
    }),
    route({
      method: 'post',
      path: '/agents/:id/goodbye',
      operationId: 'agentGoodbye',
      summary: 'An agent shutting down cleanly: it and its processes are shown stopped',
      tag: 'agent link',
      scope: 'agent',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Recorded.' } },
      async handle({ params }) {
        if (!(await agents.markStopped(params.id, deps.clock.now()))) {
          throw new AppError('AGENT_NOT_FOUND', `no agent ${params.id}`);
        }
        deps.logger.info({ agentId: params.id }, 'agent stopped');
        return { status: 204 };
      },
    }),
  ];
}
