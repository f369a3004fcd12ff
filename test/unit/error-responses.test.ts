import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import Koa from 'koa';
import { AppError, InvalidInputError } from '../../shared/errors.js';
import { errorResponses, UNAVAILABLE_RETRY_AFTER_S } from '../../shared/http/error-responses.js';
import { silentLogger } from '../../shared/logger.js';

test('a store or broker away is 503 with Retry-After; our own failures 500; bad input 400; no internals', async () => {
  const app = new Koa();
  app.use(errorResponses(silentLogger(), { service: 'master' }));
  app.use((ctx) => {
    switch (ctx.path) {
      case '/sql-down':
        throw new AppError(
          'SQL_UNAVAILABLE',
          'connect ECONNREFUSED 127.0.0.1:5432 (postgres://ackcrawl:pw@db)',
        );
      case '/sql-auth':
        throw new AppError('SQL_AUTH', 'password authentication failed for user "ackcrawl"');
      case '/bad':
        throw new InvalidInputError('BAD_JSON', 'the request body is not JSON');
      case '/bug':
        throw new Error('Cannot read properties of undefined (reading "id")');
    }
  });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ask = async (path: string) => {
    const res = await fetch(base + path);
    const body = (await res.json()) as { error: { code: string; message: string } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), ...body.error };
  };
  try {
    const down = await ask('/sql-down');
    assert.deepEqual(
      [down.status, down.code, down.retryAfter],
      [503, 'SQL_UNAVAILABLE', String(UNAVAILABLE_RETRY_AFTER_S)],
    );
    assert.match(down.message, /try again/);
    assert.doesNotMatch(down.message, /5432|ECONNREFUSED|pw/, 'no internals in the answer');

    const auth = await ask('/sql-auth');
    assert.deepEqual([auth.status, auth.code, auth.retryAfter], [500, 'SQL_AUTH', null]);
    assert.doesNotMatch(auth.message, /password/);

    const bad = await ask('/bad');
    assert.deepEqual([bad.status, bad.code, bad.message], [400, 'BAD_JSON', 'the request body is not JSON']);

    const bug = await ask('/bug');
    assert.deepEqual([bug.status, bug.code, bug.retryAfter], [500, 'INTERNAL', null]);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
