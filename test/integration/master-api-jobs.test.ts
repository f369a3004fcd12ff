import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  assertError,
  jobBody,
  problemFields,
  startTestMaster,
  type TestMaster,
} from '../helpers/master-api.js';

describe('master API: jobs', () => {
  let master: TestMaster;
  before(async () => {
    master = await startTestMaster();
  });
  after(() => master.close());

  test('POST /jobs saves a job with every default filled in; GET reads it back', async () => {
    const created = await master.call('POST', '/api/v1/jobs', {
      body: jobBody({ name: 'docs', hostDelayMs: 250, allowPrivate: true }),
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(typeof created.json.id, 'string');
    assert.equal(created.json.name, 'docs');
    assert.deepEqual(created.json.settings.seeds, ['https://example.test/']);
    assert.equal(created.json.settings.hostDelayMs, 250);
    assert.equal(created.json.settings.allowPrivate, true);
    assert.equal(created.json.settings.scope, 'host', 'a default');
    assert.equal(created.json.settings.respectRobots, true, 'a default');
    assert.match(created.json.createdAt, /^\d{4}-\d\d-\d\dT/);
    const read = await master.call('GET', `/api/v1/jobs/${created.json.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, created.json);
  });

  test('proxy credentials and header values are shown to who may change the job, not to a read token (jobs and runs)', async () => {
    const proxies = ['http://alice:s3cret@127.0.0.1:3128', 'socks5://127.0.0.1:1080'];
    const headers = [
      { name: 'Authorization', value: 'Bearer s3cret-h', host: 'example.test' },
      { name: 'Accept-Language', value: 'de' },
    ];
    const cookies = [{ name: 'sid', value: 's3cret-c', domain: '.example.test', path: '/', secure: true }];
    const created = await master.call('POST', '/api/v1/jobs', {
      body: jobBody({ name: 'behind a proxy', proxies, headers, cookies }),
    });
    assert.equal(created.status, 201, created.text);
    // Saved as normalised (a path of / on the HTTP proxy), credentials and all.
    const saved = ['http://alice:s3cret@127.0.0.1:3128/', 'socks5://127.0.0.1:1080'];
    assert.deepEqual(created.json.settings.proxies, saved);
    const run = await master.call('POST', `/api/v1/jobs/${created.json.id}/runs`);
    assert.equal(run.status, 201, run.text);
    const reader = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'reader', scopes: ['read'] },
    });
    assert.equal(reader.status, 201, reader.text);
    const asReader = (path: string) => master.call('GET', `/api/v1${path}`, { token: reader.json.secret });
    const redacted = ['http://127.0.0.1:3128', 'socks5://127.0.0.1:1080'];
    const seen = [
      (await asReader(`/jobs/${created.json.id}`)).json.settings,
      (await asReader('/jobs?limit=500')).json.items.find((j: { id: string }) => j.id === created.json.id)
        .settings,
      (await asReader(`/runs/${run.json.id}`)).json.settings,
      (await asReader(`/jobs/${created.json.id}/runs`)).json.items[0].settings,
      (await asReader('/runs?limit=500')).json.items.find((r: { id: string }) => r.id === run.json.id)
        .settings,
    ];
    for (const settings of seen) {
      assert.deepEqual(settings.proxies, redacted);
      assert.deepEqual(settings.headers, [
        { name: 'Authorization', value: '(hidden)', host: 'example.test' },
        { name: 'Accept-Language', value: '(hidden)' },
      ]);
      assert.deepEqual(settings.cookies, [{ ...cookies[0], value: '(hidden)' }]);
    }
    assert.ok(!JSON.stringify(seen).includes('s3cret'));
    // The admin (operate) reads them whole, so an edit can send them back.
    assert.deepEqual(
      (await master.call('GET', `/api/v1/jobs/${created.json.id}`)).json.settings.proxies,
      saved,
    );
    assert.deepEqual((await master.call('GET', `/api/v1/runs/${run.json.id}`)).json.settings.proxies, saved);
    assert.deepEqual(
      (await master.call('GET', `/api/v1/runs/${run.json.id}`)).json.settings.headers,
      headers,
    );
    assert.deepEqual(
      (await master.call('GET', `/api/v1/runs/${run.json.id}`)).json.settings.cookies,
      cookies,
    );
  });

  test('a bad body is 400 INVALID_REQUEST with every problem by field', async () => {
    const answer = await master.call('POST', '/api/v1/jobs', {
      body: {
        name: '',
        seeds: ['ftp://x.test/', 'https://ok.test/'],
        maxPages: -1,
        hostDelayMs: 'soon',
        colour: 'red',
      },
    });
    assertError(answer, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(answer), ['colour', 'hostDelayMs', 'maxPages', 'name', 'seeds.0']);
    for (const problem of answer.json.error.problems) assert.ok(problem.message.length > 0);
  });

  test('a body that is not an object, no JSON, no body: 400 with the problem named', async () => {
    assertError(await master.call('POST', '/api/v1/jobs', { body: [1, 2] }), 400, 'INVALID_REQUEST');
    assertError(
      await master.call('POST', '/api/v1/jobs', {
        raw: '{"name":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'BAD_JSON',
    );
    const missing = await master.call('POST', '/api/v1/jobs', { body: {} });
    assertError(missing, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(missing), ['name', 'seeds']);
  });

  test('a body that is not JSON is 415; one over the limit is 413, declared or streamed', async () => {
    assertError(
      await master.call('POST', '/api/v1/jobs', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const big = JSON.stringify(jobBody({ userAgent: 'x'.repeat(100 * 1024) }));
    assertError(
      await master.call('POST', '/api/v1/jobs', {
        raw: big,
        headers: { 'content-type': 'application/json' },
      }),
      413,
      'REQUEST_TOO_LARGE',
    );
    assertError(
      await master.call('POST', '/api/v1/jobs', {
        raw: big,
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      }),
      413,
      'REQUEST_TOO_LARGE',
    );
  });

  test('names are unique: a second job of the same name is 409 JOB_NAME_TAKEN', async () => {
    const body = jobBody();
    assert.equal((await master.call('POST', '/api/v1/jobs', { body })).status, 201);
    assertError(await master.call('POST', '/api/v1/jobs', { body }), 409, 'JOB_NAME_TAKEN');
  });

  test('PATCH changes the given fields only, and validates them', async () => {
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody({ maxDepth: 2 }) })).json;
    const patched = await master.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { maxPages: 99, name: `${job.name}-2` },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.settings.maxPages, 99);
    assert.equal(patched.json.settings.maxDepth, 2, 'kept');
    assert.equal(patched.json.name, `${job.name}-2`);
    const bad = await master.call('PATCH', `/api/v1/jobs/${job.id}`, {
      body: { maxPages: 'many', seeds: [] },
    });
    assertError(bad, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(bad), ['maxPages', 'seeds']);
    assert.equal(
      (await master.call('GET', `/api/v1/jobs/${job.id}`)).json.settings.maxPages,
      99,
      'unchanged by the bad patch',
    );
  });

  test('PATCH of a job saved by an older version (a setting missing) fills its default', async () => {
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
    const { priority: _dropped, ...older } = job.settings;
    await master.store.jobs.update(job.id, { settings: older, updatedAt: master.clock.now() });
    assert.equal((await master.call('GET', `/api/v1/jobs/${job.id}`)).json.settings.priority, undefined);
    const patched = await master.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { maxPages: 3 } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.settings.priority, 5);
    assert.equal(patched.json.settings.maxPages, 3);
  });

  test('unknown ids are 404 JOB_NOT_FOUND for GET, PATCH, DELETE and starting a run', async () => {
    assertError(await master.call('GET', '/api/v1/jobs/nope'), 404, 'JOB_NOT_FOUND');
    assertError(
      await master.call('PATCH', '/api/v1/jobs/nope', { body: { maxPages: 1 } }),
      404,
      'JOB_NOT_FOUND',
    );
    assertError(await master.call('DELETE', '/api/v1/jobs/nope'), 404, 'JOB_NOT_FOUND');
    assertError(await master.call('POST', '/api/v1/jobs/nope/runs'), 404, 'JOB_NOT_FOUND');
    assertError(await master.call('GET', '/api/v1/jobs/nope/runs'), 404, 'JOB_NOT_FOUND');
    assertError(await master.call('GET', `/api/v1/jobs/${'x'.repeat(129)}`), 400, 'INVALID_REQUEST');
  });

  test('GET /jobs pages through every job, oldest first; a bad limit is 400', async () => {
    const names: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = jobBody({ name: `paged-${i}` });
      names.push(String(body.name));
      master.clock.advance(1);
      assert.equal((await master.call('POST', '/api/v1/jobs', { body })).status, 201);
    }
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const path: string = `/api/v1/jobs?limit=2${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const page = await master.call('GET', path);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.json.items.length <= 2);
      seen.push(...page.json.items.map((j: { name: string }) => j.name));
      after = page.json.next;
      pages += 1;
    } while (after !== null && pages < 50);
    const mine = seen.filter((n) => n.startsWith('paged-'));
    assert.deepEqual(mine, names);
    const bad = await master.call('GET', '/api/v1/jobs?limit=0&colour=red');
    assertError(bad, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(bad), ['query.colour', 'query.limit']);
    assertError(await master.call('GET', '/api/v1/jobs?limit=abc'), 400, 'INVALID_REQUEST');
  });

  test('DELETE removes a job; one with an unfinished run is 409 until the run is cancelled', async () => {
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
    const run = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;
    assertError(await master.call('DELETE', `/api/v1/jobs/${job.id}`), 409, 'JOB_HAS_ACTIVE_RUNS');
    assert.equal((await master.call('POST', `/api/v1/runs/${run.id}/cancel`)).status, 200);
    const deleted = await master.call('DELETE', `/api/v1/jobs/${job.id}`);
    assert.equal(deleted.status, 204, deleted.text);
    assertError(await master.call('GET', `/api/v1/jobs/${job.id}`), 404, 'JOB_NOT_FOUND');
    assert.equal(
      (await master.call('GET', `/api/v1/runs/${run.id}`)).json.state,
      'cancelled',
      'its runs stay',
    );
  });

  test('unknown routes are 404 NOT_FOUND and known ones with another method 405', async () => {
    assertError(await master.call('GET', '/api/v1/nothing'), 404, 'NOT_FOUND');
    assertError(await master.call('GET', '/'), 404, 'NOT_FOUND');
    assertError(await master.call('PUT', '/api/v1/jobs'), 405, 'METHOD_NOT_ALLOWED');
  });
});
