import { AppError, InvalidInputError } from '../../../shared/errors.js';
import type { WebhookRow } from '../../../shared/ports/alert-store.js';
import type { TokenRow } from '../../../shared/ports/sql-store.js';
import { scopeAllows } from '../auth/scopes.js';
import { deliveriesFor, eventBody } from '../../alerts/events.js';
import { generateWebhookSecret } from '../../webhooks/signature.js';
import { webhookUrlProblem } from '../../webhooks/url-check.js';
import type { MasterAppDeps } from '../deps.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import {
  createdWebhookSchema,
  deliverySchema,
  deliveryView,
  webhookCreateSchema,
  webhookPatchSchema,
  webhookSchema,
  webhookView,
} from '../schemas/webhook.js';

const isAdmin = (caller: TokenRow | null): boolean => caller !== null && scopeAllows(caller.scopes, 'admin');

const notFound = (id: string): AppError => new AppError('WEBHOOK_NOT_FOUND', `no webhook endpoint ${id}`);

/** The type of the event POST /webhooks/{id}/test sends. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * Webhook endpoints (Standard Webhooks, docs/alerts.md). They hold signing secrets and make the
 * master send requests out, so changing them takes admin.
 */
export function webhookRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { webhooks, deliveries } = deps.store;
  const checkUrl = (url: string): void => {
    const problem = webhookUrlProblem(url, deps.alerting.allowPrivateWebhooks);
    if (problem !== null) {
      throw new InvalidInputError('WEBHOOK_URL_REFUSED', `the webhook URL is refused: ${problem}`, {
        details: { problems: [{ field: 'url', message: problem }] },
      });
    }
  };
  const requireWebhook = async (id: string): Promise<WebhookRow> => {
    const row = await webhooks.get(id);
    if (row === null) throw notFound(id);
    return row;
  };
  return [
    route({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Add a webhook endpoint (its signing secret is in this answer only)',
      tag: 'webhooks',
      scope: 'admin',
      body: webhookCreateSchema,
      responses: { 201: { description: 'The endpoint, with its secret.', schema: createdWebhookSchema } },
      async handle({ body }) {
        checkUrl(body.url);
        const now = deps.clock.now();
        const secret = generateWebhookSecret();
        const row = await webhooks.create({
          id: deps.newId(),
          url: body.url,
          description: body.description,
          secret,
          eventTypes: body.eventTypes,
          enabled: body.enabled,
          disabledReason: null,
          createdAt: now,
          updatedAt: now,
        });
        deps.logger.info({ webhookId: row.id, eventTypes: row.eventTypes }, 'webhook endpoint created');
        return { status: 201, body: { ...webhookView(row), secret } };
      },
    }),
    route({
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'The webhook endpoints (never their secrets), oldest first, paged',
      tag: 'webhooks',
      scope: 'read',
      query: pageQuery,
      responses: { 200: { description: 'A page of endpoints.', schema: pageOf(webhookSchema) } },
      async handle({ query, caller }) {
        const page = await webhooks.list({ limit: query.limit, after: query.after ?? null });
        const full = isAdmin(caller);
        return { status: 200, body: { items: page.items.map((w) => webhookView(w, full)), next: page.next } };
      },
    }),
    route({
      method: 'get',
      path: '/webhooks/:id',
      operationId: 'getWebhook',
      summary: 'One webhook endpoint',
      tag: 'webhooks',
      scope: 'read',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The endpoint.', schema: webhookSchema } },
      async handle({ params, caller }) {
        return { status: 200, body: webhookView(await requireWebhook(params.id), isAdmin(caller)) };
      },
    }),
    route({
      method: 'patch',
      path: '/webhooks/:id',
      operationId: 'updateWebhook',
      summary: 'Change an endpoint: URL, description, event types, enabled (enabling clears a 410)',
      tag: 'webhooks',
      scope: 'admin',
      params: idParams,
      body: webhookPatchSchema,
      lookup: true,
      responses: { 200: { description: 'The endpoint after the change.', schema: webhookSchema } },
      async handle({ params, body }) {
        if (body.url !== undefined) checkUrl(body.url);
        const row = await webhooks.update(params.id, {
          ...(body.url === undefined ? {} : { url: body.url }),
          ...(body.description === undefined ? {} : { description: body.description }),
          ...(body.eventTypes === undefined ? {} : { eventTypes: body.eventTypes }),
          ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
          ...(body.enabled === true ? { disabledReason: null } : {}),
          updatedAt: deps.clock.now(),
        });
        if (row === null) throw notFound(params.id);
        return { status: 200, body: webhookView(row) };
      },
    }),
    route({
      method: 'delete',
      path: '/webhooks/:id',
      operationId: 'deleteWebhook',
      summary: 'Remove an endpoint and its deliveries',
      tag: 'webhooks',
      scope: 'admin',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Deleted.' } },
      async handle({ params }) {
        if (!(await webhooks.delete(params.id))) throw notFound(params.id);
        deps.logger.info({ webhookId: params.id }, 'webhook endpoint deleted');
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/webhooks/:id/test',
      operationId: 'testWebhook',
      summary: `Send a ${TEST_EVENT_TYPE} event now; answers with the delivery after that attempt (retried like any other)`,
      tag: 'webhooks',
      scope: 'admin',
      params: idParams,
      lookup: true,
      responses: { 200: { description: 'The delivery after its first attempt.', schema: deliverySchema } },
      async handle({ params }) {
        const webhook = await requireWebhook(params.id);
        const now = deps.clock.now();
        const body = eventBody(TEST_EVENT_TYPE, now, {
          webhookId: webhook.id,
          message: 'a test from ackcrawl',
        });
        // Made for any endpoint; on a disabled one the attempt is cancelled and says why.
        const [row] = deliveriesFor(
          [{ ...webhook, enabled: true, eventTypes: [] }],
          null,
          TEST_EVENT_TYPE,
          body,
          now,
        );
        if (row === undefined) throw notFound(params.id);
        await deliveries.create([row]);
        const after = await deps.alerting.deliverer.deliver(row);
        return { status: 200, body: deliveryView(after ?? (await deliveries.get(row.id)) ?? row) };
      },
    }),
    route({
      method: 'get',
      path: '/webhooks/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's deliveries, newest first, paged: attempts, last status and error, next attempt",
      tag: 'webhooks',
      scope: 'read',
      params: idParams,
      query: pageQuery,
      lookup: true,
      responses: { 200: { description: 'A page of deliveries.', schema: pageOf(deliverySchema) } },
      async handle({ params, query }) {
        await requireWebhook(params.id);
        const page = await deliveries.listByWebhook(params.id, {
          limit: query.limit,
          after: query.after ?? null,
        });
        return { status: 200, body: { items: page.items.map(deliveryView), next: page.next } };
      },
    }),
  ];
}
