import { AppError } from '../../../shared/errors.js';
import type { AlertRuleKind } from '../../../shared/ports/alert-store.js';
import { RULE_PARAMS } from '../../alerts/rule-params.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { ruleCreateSchema, rulePatchSchema, ruleSchema, ruleView } from '../schemas/alert.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import { isConflict } from '../store-errors.js';
import { invalidRequest, problemsOf } from '../validation.js';

const notFound = (id: string): AppError => new AppError('ALERT_RULE_NOT_FOUND', `no alert rule ${id}`);
const nameTaken = (name: string): AppError =>
  new AppError('ALERT_RULE_NAME_TAKEN', `an alert rule named '${name}' exists already; choose another name`);

/** A kind's params, defaults filled in, or a 400 naming each field as `params.x`. */
function parseParams(kind: AlertRuleKind, params: unknown): unknown {
  const parsed = RULE_PARAMS[kind].safeParse(params);
  if (parsed.success) return parsed.data;
  throw invalidRequest(
    problemsOf(parsed.error, 'body').map((p) => ({
      ...p,
      field: `params.${p.field}`.replace(/\.body$/, ''),
    })),
  );
}

/** Alert rules: what the engine watches (docs/alerts.md). Changing them takes operate. */
export function alertRuleRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { alertRules } = deps.store;
  const view = (row: Parameters<typeof ruleView>[0]) => ruleView(row, deps.alerting.status(row.id));
  return [
    route({
      method: 'post',
      path: '/alert-rules',
      operationId: 'createAlertRule',
      summary: 'Make an alert rule',
      tag: 'alerts',
      scope: 'operate',
      body: ruleCreateSchema,
      responses: { 201: { description: 'The rule, defaults filled in.', schema: ruleSchema } },
      errors: { 409: 'ALERT_RULE_NAME_TAKEN' },
      async handle({ body }) {
        const params = parseParams(body.kind, body.params);
        const now = deps.clock.now();
        try {
          const row = await alertRules.create({
            id: deps.newId(),
            name: body.name,
            kind: body.kind,
            params,
            enabled: body.enabled,
            createdAt: now,
            updatedAt: now,
          });
          deps.logger.info({ ruleId: row.id, kind: row.kind }, 'alert rule created');
          return { status: 201, body: view(row) };
        } catch (err) {
          if (isConflict(err)) throw nameTaken(body.name);
          throw err;
        }
      },
    }),
    route({
      method: 'get',
      path: '/alert-rules',
      operationId: 'listAlertRules',
      summary: 'The alert rules, oldest first, paged',
      tag: 'alerts',
      scope: 'read',
      query: pageQuery,
      responses: { 200: { description: 'A page of rules.', schema: pageOf(ruleSchema) } },
      async handle({ query }) {
        const page = await alertRules.list({ limit: query.limit, after: query.after ?? null });
        return { status: 200, body: { items: page.items.map(view), next: page.next } };
      },
    }),
    route({
      method: 'get',
      path: '/alert-rules/:id',
      operationId: 'getAlertRule',
      summary: "One alert rule, with the engine's last pass over it",
      tag: 'alerts',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The rule.', schema: ruleSchema } },
      async handle({ params }) {
        const row = await alertRules.get(params.id);
        if (row === null) throw notFound(params.id);
        return { status: 200, body: view(row) };
      },
    }),
    route({
      method: 'patch',
      path: '/alert-rules/:id',
      operationId: 'updateAlertRule',
      summary: 'Change a rule: its name, params, or whether it is enabled (its kind stays)',
      tag: 'alerts',
      scope: 'operate',
      params: idParams,
      body: rulePatchSchema,
      lookup: true,
      responses: { 200: { description: 'The rule after the change.', schema: ruleSchema } },
      errors: { 409: 'ALERT_RULE_NAME_TAKEN' },
      async handle({ params, body }) {
        const current = await alertRules.get(params.id);
        if (current === null) throw notFound(params.id);
        const parsed = body.params === undefined ? undefined : parseParams(current.kind, body.params);
        try {
          const row = await alertRules.update(params.id, {
            ...(body.name === undefined ? {} : { name: body.name }),
            ...(parsed === undefined ? {} : { params: parsed }),
            ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
            updatedAt: deps.clock.now(),
          });
          if (row === null) throw notFound(params.id);
          return { status: 200, body: view(row) };
        } catch (err) {
          if (isConflict(err)) throw nameTaken(body.name ?? current.name);
          throw err;
        }
      },
    }),
    route({
      method: 'delete',
      path: '/alert-rules/:id',
      operationId: 'deleteAlertRule',
      summary: 'Delete a rule: its active alerts are resolved on the next pass; its history stays',
      tag: 'alerts',
      scope: 'operate',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Deleted.' } },
      async handle({ params }) {
        if (!(await alertRules.delete(params.id))) throw notFound(params.id);
        deps.logger.info({ ruleId: params.id }, 'alert rule deleted');
        return { status: 204 };
      },
    }),
  ];
}
