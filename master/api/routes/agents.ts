import { AppError } from '../../../shared/errors.js';
import type { AgentRow, SlotOrders } from '../../../shared/ports/sql-store.js';
import { DEFAULT_AGENT_LOST_AFTER_MS } from '../../fleet/fleet-view.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { agentSchema, agentView, processCountSchema, slotParams } from '../schemas/agent.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';

/**
 * The fleet, for people: host agents and their crawler processes, and the changes asked of them.
 * A change is written to SQL as the agent's desired state (so it survives a master restart); the
 * agent takes it with the answer to its next heartbeat, and is nudged to send that one now.
 */
export function agentRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { agents } = deps.store;
  const lostAfterMs = deps.options.agentLostAfterMs ?? DEFAULT_AGENT_LOST_AFTER_MS;
  const view = async (agent: AgentRow) =>
    agentView(agent, await agents.processes(agent.id), deps.clock.now(), lostAfterMs);
  const found = async (id: string): Promise<AgentRow> => {
    const agent = await agents.get(id);
    if (agent === null) throw new AppError('AGENT_NOT_FOUND', `no agent ${id}`);
    return agent;
  };
  const changed = async (agent: AgentRow | null, id: string, what: string) => {
    if (agent === null) throw new AppError('AGENT_NOT_FOUND', `no agent ${id}`);
    deps.logger.info({ agentId: id, desiredProcesses: agent.desiredProcesses, drain: agent.drain }, what);
    deps.fleet?.nudge(agent.url);
    return { status: 200, body: await view(agent) };
  };
  const slotOf = async (id: string, slot: number): Promise<void> => {
    const agent = await found(id);
    if (slot >= agent.desiredProcesses) {
      throw new AppError(
        'AGENT_SLOT_NOT_FOUND',
        `agent ${id} has slots 0 to ${agent.desiredProcesses - 1}; there is no slot ${slot}`,
      );
    }
  };
  const agentAnswer = { 200: { description: 'The agent, with what is asked of it.', schema: agentSchema } };

  return [
    route({
      method: 'get',
      path: '/agents',
      operationId: 'listAgents',
      summary: 'The host agents and their crawler processes, oldest registration first, paged',
      tag: 'agents',
      scope: 'read',
      query: pageQuery,
      responses: { 200: { description: 'A page of agents.', schema: pageOf(agentSchema) } },
      async handle({ query }) {
        const page = await agents.list({ limit: query.limit, after: query.after ?? null });
        return { status: 200, body: { items: await Promise.all(page.items.map(view)), next: page.next } };
      },
    }),
    route({
      method: 'get',
      path: '/agents/:id',
      operationId: 'getAgent',
      summary: 'One agent: host facts, state, and each crawler process',
      tag: 'agents',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The agent.', schema: agentSchema } },
      async handle({ params }) {
        return { status: 200, body: await view(await found(params.id)) };
      },
    }),
    route({
      method: 'put',
      path: '/agents/:id/processes',
      operationId: 'setAgentProcesses',
      summary: 'Set how many crawler processes the agent runs (ends a drain)',
      tag: 'agents',
      scope: 'operate',
      params: idParams,
      body: processCountSchema,
      lookup: true,
      responses: agentAnswer,
      async handle({ params, body }) {
        const agent = await agents.setDesired(params.id, {
          desiredProcesses: body.count,
          drain: false,
          orders: (o: SlotOrders) => ({ ...o, stopped: o.stopped.filter((s) => s < body.count) }),
        });
        return changed(agent, params.id, 'agent process count set');
      },
    }),
    route({
      method: 'post',
      path: '/agents/:id/processes/:slot/stop',
      operationId: 'stopAgentProcess',
      summary:
        'Stop one process: it drains (no new task; in-flight ones finish or go back), and stays stopped',
      tag: 'agents',
      scope: 'operate',
      params: slotParams,
      lookup: true,
      responses: agentAnswer,
      async handle({ params }) {
        await slotOf(params.id, params.slot);
        const agent = await agents.setDesired(params.id, {
          orders: (o) => ({ ...o, stopped: [...o.stopped, params.slot] }),
        });
        return changed(agent, params.id, `agent process ${params.slot} to stop`);
      },
    }),
    route({
      method: 'post',
      path: '/agents/:id/processes/:slot/restart',
      operationId: 'restartAgentProcess',
      summary: 'Restart one process (a stopped or crash-looping one too): it drains, then starts again',
      tag: 'agents',
      scope: 'operate',
      params: slotParams,
      lookup: true,
      responses: agentAnswer,
      async handle({ params }) {
        await slotOf(params.id, params.slot);
        const key = String(params.slot);
        const agent = await agents.setDesired(params.id, {
          orders: (o) => ({
            stopped: o.stopped.filter((s) => s !== params.slot),
            restarts: { ...o.restarts, [key]: (o.restarts[key] ?? 0) + 1 },
          }),
        });
        return changed(agent, params.id, `agent process ${params.slot} to restart`);
      },
    }),
    route({
      method: 'post',
      path: '/agents/:id/drain',
      operationId: 'drainAgent',
      summary: 'Drain the agent: every process drains and stops; none starts until a count is set',
      tag: 'agents',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: agentAnswer,
      async handle({ params }) {
        return changed(await agents.setDesired(params.id, { drain: true }), params.id, 'agent to drain');
      },
    }),
    route({
      method: 'delete',
      path: '/agents/:id',
      operationId: 'forgetAgent',
      summary:
        'Forget a lost or stopped agent (a host gone for good): it and its processes leave the fleet, and its agent.lost alert resolves',
      tag: 'agents',
      scope: 'operate',
      params: idParams,
      lookup: true,
      errors: { 409: 'The agent is online or draining (AGENT_ALIVE).' },
      responses: { 204: { description: 'Forgotten.' } },
      async handle({ params }) {
        const agent = await found(params.id);
        if (!(await agents.forget(params.id))) {
          throw new AppError(
            'AGENT_ALIVE',
            `agent ${params.id} is ${agent.state}: drain and stop it first; only a lost or stopped agent is forgotten`,
          );
        }
        deps.logger.info({ agentId: params.id, was: agent.state }, 'agent forgotten');
        return { status: 204 };
      },
    }),
  ];
}
