import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN_FILE } from '../../master/api/auth/bootstrap-admin.js';
import type { TokenScope } from '../../shared/ports/sql-store.js';
import { assertError, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';

describe('master API: tokens and scopes', () => {
  let master: TestMaster;
  const tokens: Partial<Record<TokenScope, string>> = {};
  let jobId: string;
  let runId: string;

  before(async () => {
    master = await startTestMaster();
    for (const scope of ['read', 'operate', 'admin'] as const) {
      const made = await master.call('POST', '/api/v1/tokens', {
        body: { name: `${scope} bot`, scopes: [scope] },
      });
      assert.equal(made.status, 201, made.text);
      tokens[scope] = made.json.secret;
    }
    jobId = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json.id;
    runId = (await master.call('POST', `/api/v1/jobs/${jobId}/runs`)).json.id;
  });
  after(() => master.close());

  test('the bootstrap admin token is written once to <dataDir>/admin-token with mode 0600', () => {
    const path = join(master.dir, ADMIN_TOKEN_FILE);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, 'utf8').trim(), master.adminToken);
  });

  test('no token, a wrong one, the cluster token or a malformed header: 401 with WWW-Authenticate', async () => {
    for (const token of [null, 'ackp_wrong', 'cluster-token-0123456789abcdef']) {
      const answer = await master.call('GET', '/api/v1/jobs', { token });
      assertError(answer, 401, 'UNAUTHORIZED');
      assert.match(String(answer.headers['www-authenticate']), /^Bearer/);
    }
    assertError(
      await master.call('GET', '/api/v1/jobs', {
        token: null,
        headers: { authorization: `Basic ${master.adminToken}` },
      }),
      401,
      'UNAUTHORIZED',
    );
    // A refused caller's body is not read: a big one is not a 413.
    assertError(
      await master.call('POST', '/api/v1/jobs', {
        token: null,
        raw: 'x'.repeat(200 * 1024),
        headers: { 'content-type': 'application/json' },
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  test('every route needs its scope: under-scoped is 403, and each scope includes the ones below', async () => {
    const rank = { read: 0, operate: 1, admin: 2 } as const;
    const path = (p: string) =>
      `/api/v1${p.replace('/jobs/:id/runs', `/jobs/${jobId}/runs`).replace('/jobs/:id', '/jobs/none').replace('/runs/:id', `/runs/${runId}`).replace('/tokens/:id', '/tokens/none')}`;
    // Every route the OpenAPI document names, with the scope it says the route needs.
    const doc = (await master.call('GET', '/api/v1/openapi.json', { token: null })).json;
    const all = Object.entries(
      doc.paths as Record<
        string,
        Record<string, { 'x-scope'?: TokenScope | 'agent'; requestBody?: unknown }>
      >,
    ).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        method,
        path: p.replace(/^\/api\/v1/, '').replace(/\{(\w+)\}/g, ':$1'),
        scope: op['x-scope'] ?? null,
        body: op.requestBody !== undefined,
      })),
    );
    const specs = all.filter((s) => s.scope !== null && s.scope !== 'agent');
    assert.ok(specs.length >= 15);
    // The routes agents call take the agent credential only: every person's token is refused.
    const agentLinks = all.filter((s) => s.scope === 'agent');
    assert.ok(agentLinks.length >= 3);
    for (const spec of agentLinks) {
      for (const held of ['read', 'operate', 'admin'] as const) {
        const answer = await master.call(
          spec.method.toUpperCase(),
          `/api/v1${spec.path.replace(':id', 'some-agent')}`,
          {
            token: tokens[held] ?? null,
            ...(spec.body ? { body: { bogus: true } } : {}),
          },
        );
        assertError(answer, 401, 'UNAUTHORIZED');
      }
    }
    for (const spec of specs) {
      for (const held of ['read', 'operate', 'admin'] as const) {
        const answer = await master.call(spec.method.toUpperCase(), path(spec.path), {
          token: tokens[held] ?? null,
          // A caller let in gets past the scope check: a 2xx, or 400 (this bogus body), 404 or 409.
          ...(spec.body ? { body: { bogus: true } } : {}),
        });
        const needed = spec.scope as TokenScope;
        const label = `${spec.method} ${spec.path} with ${held}`;
        if (rank[held] < rank[needed]) {
          assertError(answer, 403, 'FORBIDDEN');
          assert.match(
            answer.json.error.message,
            new RegExp(`needs a token with the ${needed} scope`),
            label,
          );
        } else {
          assert.notEqual(answer.status, 403, `${label}: ${answer.text}`);
          assert.notEqual(answer.status, 401, `${label}: ${answer.text}`);
        }
      }
    }
    // GETs take read; jobs and runs changes take operate; tokens and deleting jobs take admin.
    const scopeOf = (method: string, p: string) =>
      specs.find((s) => s.method === method && s.path === p)?.scope;
    assert.equal(scopeOf('get', '/runs/:id'), 'read');
    assert.equal(scopeOf('post', '/jobs'), 'operate');
    assert.equal(scopeOf('post', '/runs/:id/cancel'), 'operate');
    assert.equal(scopeOf('delete', '/jobs/:id'), 'admin');
    assert.equal(scopeOf('get', '/tokens'), 'admin');
  });

  test('tokens: the secret once, stored as its SHA-256 only; listed without secrets; revoked ones refused', async () => {
    const made = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'ci', scopes: ['read', 'read'] },
    });
    assert.equal(made.status, 201, made.text);
    const { id, secret } = made.json;
    assert.match(secret, /^ackp_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(made.json.scopes, ['read']);
    const stored = (await master.store.tokens.list({ limit: 500 })).items.find((t) => t.id === id);
    assert.equal(stored?.hash, createHash('sha256').update(secret).digest('hex'));
    assert.ok(!JSON.stringify(stored).includes(secret), 'the secret is not stored');
    const listed = await master.call('GET', '/api/v1/tokens?limit=500');
    assert.ok(!listed.text.includes(secret), 'never listed');
    assert.ok(listed.json.items.some((t: { id: string; name: string }) => t.id === id && t.name === 'ci'));
    assert.equal((await master.call('GET', '/api/v1/jobs', { token: secret })).status, 200);
    assert.equal((await master.call('DELETE', `/api/v1/tokens/${id}`)).status, 204);
    assertError(await master.call('GET', '/api/v1/jobs', { token: secret }), 401, 'UNAUTHORIZED');
    assertError(await master.call('DELETE', `/api/v1/tokens/${id}`), 404, 'TOKEN_NOT_FOUND');
    const revoked = (await master.call('GET', '/api/v1/tokens?limit=500')).json.items.find(
      (t: { id: string }) => t.id === id,
    );
    assert.ok(revoked.revokedAt);
  });

  test('a token body that does not validate is 400 with its problems', async () => {
    const answer = await master.call('POST', '/api/v1/tokens', { body: { name: ' ', scopes: ['root'] } });
    assertError(answer, 400, 'INVALID_REQUEST');
    assert.deepEqual(answer.json.error.problems.map((p: { field: string }) => p.field).sort(), [
      'name',
      'scopes.0',
    ]);
    assertError(
      await master.call('POST', '/api/v1/tokens', { body: { name: 'x', scopes: [] } }),
      400,
      'INVALID_REQUEST',
    );
  });

  test('health and the OpenAPI document are open; the Host check and cross-origin refusal come first', async () => {
    const health = await master.call('GET', '/api/v1/health', { token: null });
    assert.equal(health.status, 200, health.text);
    assert.deepEqual(health.json, { status: 'ok', store: 'ok' });
    assert.equal((await master.call('GET', '/api/v1/openapi.json', { token: null })).status, 200);
    assertError(
      await master.call('GET', '/api/v1/health', { headers: { host: 'evil.example:8600' } }),
      403,
      'HOST_NOT_ALLOWED',
    );
    assertError(
      await master.call('GET', '/api/v1/jobs', { headers: { origin: 'https://evil.example' } }),
      403,
      'CROSS_ORIGIN',
    );
    assertError(
      await master.call('GET', '/api/v1/jobs', { headers: { 'sec-fetch-site': 'cross-site' } }),
      403,
      'CROSS_ORIGIN',
    );
  });
});
