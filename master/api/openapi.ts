import { z } from 'zod';
import { API_ERROR_CODES } from '../../shared/error-codes/index.js';
import type { RouteSpec } from './route-spec.js';
import { errorSchema } from './schemas/common.js';

export const API_PREFIX = '/api/v1';

type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema (2020-12, OpenAPI 3.1's dialect), for requests or for answers. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** `/jobs/:id` → `/jobs/{id}`. */
export function openApiPath(routerPath: string): string {
  return routerPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The codes an error status stands for, from the catalogue, for the docs. */
function codesFor(status: number): string[] {
  return Object.entries(API_ERROR_CODES)
    .filter(([, spec]) => spec.status === status)
    .map(([code]) => code);
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** What may go wrong on a route, besides its own errors: from what it takes and who may call it. */
function errorResponses(spec: RouteSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (spec.params || spec.query || spec.body) {
    out['400'] = errorResponse(
      'The request does not validate: `problems` lists each field (INVALID_REQUEST, BAD_JSON).',
    );
  }
  if (spec.scope !== null) {
    out['401'] = errorResponse('No valid bearer token: missing, unknown or revoked (UNAUTHORIZED).');
    out['403'] = errorResponse(
      `The token lacks the ${spec.scope} scope (FORBIDDEN); also HOST_NOT_ALLOWED, CROSS_ORIGIN.`,
    );
  }
  if (spec.lookup)
    out['404'] = errorResponse(
      'No such id (JOB_NOT_FOUND, RUN_NOT_FOUND, TOKEN_NOT_FOUND, ALERT_RULE_NOT_FOUND, ALERT_NOT_FOUND, WEBHOOK_NOT_FOUND, AGENT_NOT_FOUND, AGENT_SLOT_NOT_FOUND).',
    );
  for (const [status, code] of Object.entries(spec.errors ?? {}))
    out[status] = errorResponse(`${code}: ${codeMeaning(code)}`);
  if (spec.body) {
    out['413'] = errorResponse('The body is over the limit (REQUEST_TOO_LARGE).');
    out['415'] = errorResponse('The body is not Content-Type: application/json (UNSUPPORTED_MEDIA_TYPE).');
  }
  out['500'] = errorResponse(`The master failed (${codesFor(500).join(', ')}); its log says why.`);
  return out;
}

function codeMeaning(code: string): string {
  return (API_ERROR_CODES as Record<string, { meaning: string }>)[code]?.meaning ?? '';
}

function parameters(spec: RouteSpec): unknown[] {
  const out: unknown[] = [];
  const add = (where: 'path' | 'query', schema: z.ZodType | undefined): void => {
    if (!schema) return;
    const object = jsonSchema(schema, 'input') as {
      properties?: Record<string, JsonSchema>;
      required?: string[];
    };
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const { description, ...rest } = property;
      out.push({
        name,
        in: where,
        required: where === 'path' || (object.required ?? []).includes(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
        ...(where === 'query' && (rest.anyOf !== undefined || rest.type === 'array')
          ? { explode: true }
          : {}),
      });
    }
  };
  add('path', spec.params);
  add('query', spec.query);
  return out;
}

/**
 * The OpenAPI 3.1 document of the API, made from the route table: every route's path, query and
 * body schemas are the zod schemas that validate its requests, and its answers' schemas those the
 * handlers' output follows.
 */
export function buildOpenApi(routes: readonly RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of routes) {
    const path = API_PREFIX + openApiPath(spec.path);
    const responses: Record<string, unknown> = {};
    for (const [status, answer] of Object.entries(spec.responses)) {
      responses[status] = {
        description: answer.description,
        ...(answer.schema
          ? { content: { 'application/json': { schema: jsonSchema(answer.schema, 'output') } } }
          : {}),
        ...(answer.mediaTypes
          ? {
              content: Object.fromEntries(
                answer.mediaTypes.map((type) => [type.split(';')[0], { schema: { type: 'string' } }]),
              ),
            }
          : {}),
      };
    }
    (paths[path] ??= {})[spec.method] = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.scope === null ? [] : [{ bearer: [spec.scope] }],
      ...(spec.scope === null ? {} : { 'x-scope': spec.scope }),
      parameters: parameters(spec),
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } },
            },
          }
        : {}),
      responses: { ...responses, ...errorResponses(spec) },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ackcrawl master API',
      version,
      description:
        "Jobs (saved crawl definitions), their runs, API tokens, alert rules, alerts and webhook endpoints (docs/alerts.md), and the fleet of host agents (docs/fleet.md). Every route but /health and /openapi.json needs `Authorization: Bearer <token>` with a scope: read (GET routes), operate (also create and edit jobs; start, pause, resume, cancel runs; edit alert rules; change agents' processes), admin (everything: tokens, deleting jobs, webhook endpoints). The `agent link` routes take the agent credential instead (scope `agent`, docs/fleet.md).",
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: jsonSchema(errorSchema, 'output') },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A token made by POST /api/v1/tokens, or the bootstrap admin token (<dataDir>/admin-token or ACKCRAWL_ADMIN_TOKEN); on the agent link routes, the agent credential (ACKCRAWL_AGENT_TOKEN or <dataDir>/agent-token).',
        },
      },
    },
  };
}
