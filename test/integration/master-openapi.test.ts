import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type Router from '@koa/router';
import { z } from 'zod';
import { pageOf } from '../../master/api/schemas/common.js';
import { jobCreateSchema, jobSchema } from '../../master/api/schemas/job.js';
import { failureSchema, runSchema } from '../../master/api/schemas/run.js';
import { createdTokenSchema, tokenSchema } from '../../master/api/schemas/token.js';
import { jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';

interface Operation {
  operationId: string;
  security: { bearer?: string[] }[];
  'x-scope'?: string;
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
}

/** The routes the app's router really has: `GET /api/v1/jobs/{id}`, … (HEAD is GET's twin). */
function routerRoutes(master: TestMaster): string[] {
  const app = master.app;
  const dispatch = app.middleware.find((m) => (m as { router?: Router }).router !== undefined) as
    { router: Router } | undefined;
  assert.ok(dispatch, 'the app mounts a router');
  return dispatch.router.stack.flatMap((layer) =>
    layer.methods
      .filter((method) => method !== 'HEAD')
      .map((method) => `${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
  );
}

describe('master API: the OpenAPI document', () => {
  let master: TestMaster;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: Record<string, Record<string, unknown>>;
  };
  before(async () => {
    master = await startTestMaster();
    const answer = await master.call('GET', '/api/v1/openapi.json', { token: null });
    assert.equal(answer.status, 200, answer.text);
    doc = answer.json;
  });
  after(() => master.close());

  const documented = (): string[] =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );

  test('is OpenAPI 3.1 with a bearer security scheme', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes?.bearer, {
      type: 'http',
      scheme: 'bearer',
      description: (doc.components.securitySchemes?.bearer as { description: string }).description,
    });
  });

  test('documents every route of the router, and routes every documented path and method', () => {
    const routed = routerRoutes(master).sort();
    const docs = documented().sort();
    assert.ok(routed.length >= 18, routed.join('\n'));
    assert.deepEqual(
      routed.filter((r) => !docs.includes(r)),
      [],
      'routes missing from the document',
    );
    assert.deepEqual(
      docs.filter((d) => !routed.includes(d)),
      [],
      'documented routes the router does not have',
    );
  });

  test('every operation says its parameters, security and answers', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        const label = `${method} ${path}`;
        assert.ok(op.operationId, label);
        for (const name of pathParams) {
          assert.ok(
            op.parameters.some((p) => p.in === 'path' && p.name === name && p.required),
            `${label}: path parameter ${name}`,
          );
        }
        const open = path.endsWith('/health') || path.endsWith('/openapi.json');
        if (open) {
          assert.deepEqual(op.security, [], `${label} is open`);
        } else {
          assert.deepEqual(op.security, [{ bearer: [op['x-scope']] }], label);
          assert.ok(op.responses['401'] && op.responses['403'], `${label}: 401 and 403`);
        }
        assert.ok(
          Object.keys(op.responses).some((s) => s.startsWith('2')),
          `${label}: a success answer`,
        );
        if (op.requestBody)
          assert.ok(op.responses['400'] && op.responses['413'] && op.responses['415'], label);
      }
    }
  });

  test("a request body's schema is the one that validates it", () => {
    const create = doc.paths['/api/v1/jobs']?.post;
    assert.deepEqual(
      create?.requestBody?.content['application/json']?.schema,
      (() => {
        const schema = z.toJSONSchema(jobCreateSchema, { io: 'input', unrepresentable: 'any' }) as Record<
          string,
          unknown
        >;
        delete schema.$schema;
        return schema;
      })(),
    );
    const schema = create?.requestBody?.content['application/json']?.schema as {
      required: string[];
      properties: Record<string, unknown>;
      additionalProperties: boolean;
    };
    assert.deepEqual(schema.required.sort(), ['name', 'seeds']);
    assert.ok(schema.properties.hostDelayMs && schema.properties.allowPrivate && schema.properties.maxPages);
    assert.equal(schema.additionalProperties, false);
    const list = doc.paths['/api/v1/jobs']?.get;
    assert.deepEqual(
      list?.parameters.map((p) => `${p.in}:${p.name}`),
      ['query:limit', 'query:after'],
    );
  });

  test('the answers follow the schemas the document gives for them', async () => {
    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody() });
    jobSchema.parse(job.json);
    pageOf(jobSchema).parse((await master.call('GET', '/api/v1/jobs')).json);
    const run = await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`);
    runSchema.parse(run.json);
    runSchema.parse((await master.call('POST', `/api/v1/runs/${run.json.id}/pause`)).json);
    pageOf(runSchema).parse((await master.call('GET', '/api/v1/runs')).json);
    await master.store.logs.append([
      {
        runId: run.json.id,
        url: 'https://example.test/',
        code: 'TIMEOUT',
        attempts: 3,
        lastError: 'timed out',
        final: true,
        at: 1,
      },
    ]);
    const failures = pageOf(failureSchema).parse(
      (await master.call('GET', `/api/v1/runs/${run.json.id}/failures`)).json,
    );
    assert.equal(failures.items.length, 1);
    createdTokenSchema
      .strict()
      .parse((await master.call('POST', '/api/v1/tokens', { body: { name: 'x', scopes: ['read'] } })).json);
    pageOf(tokenSchema).parse((await master.call('GET', '/api/v1/tokens')).json);
  });
});
