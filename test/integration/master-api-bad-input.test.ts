import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestMaster, type TestMaster } from '../helpers/master-api.js';

/** Bodies and query strings no route takes; none of them may cost a 500 or a stack trace. */
const BODIES: (string | undefined)[] = [
  undefined,
  '',
  'null',
  '"text"',
  '42',
  '[]',
  '{}',
  '{"name":{},"seeds":"https://x.test/"}',
  '{"name":"x","seeds":[null,{},[]],"hostRules":"garbage;;=","proxies":["file:///etc/passwd"]}',
  '{"name":"x","seeds":["javascript:alert(1)"],"maxPages":1e309,"__proto__":{"admin":true}}',
  `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`,
  '{"name":"x",',
  '\u0000\uffff',
];
const QUERIES = [
  '',
  '?limit=-1',
  '?limit=1&limit=2',
  '?after=%FF%FE',
  '?state[]=x',
  '?url=',
  '?final=1&x=%00',
];

describe('master API: bad input never costs a 500', () => {
  let master: TestMaster;
  let ids: { job: string; run: string };
  before(async () => {
    master = await startTestMaster();
    const job = (
      await master.call('POST', '/api/v1/jobs', { body: { name: 'fuzz', seeds: ['https://a.test/'] } })
    ).json;
    const run = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;
    ids = { job: job.id, run: run.id };
  });
  after(() => master.close());

  test('every documented route, with every bad body and query, answers 2xx or 4xx with a JSON error', async () => {
    const doc = (await master.call('GET', '/api/v1/openapi.json')).json;
    let calls = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) {
        for (const id of ['%ZZ', '..%2F..%2Fetc', ids.job, ids.run]) {
          const concrete = path.replace('{id}', id);
          for (const query of QUERIES) {
            for (const raw of method === 'get' || method === 'delete' ? [undefined] : BODIES) {
              const answer = await master.call(method.toUpperCase(), `${concrete}${query}`, {
                ...(raw === undefined ? {} : { raw, headers: { 'content-type': 'application/json' } }),
              });
              calls += 1;
              const label = `${method} ${concrete}${query} ${String(raw).slice(0, 40)}: ${answer.text.slice(0, 300)}`;
              assert.ok(answer.status < 500, label);
              assert.ok(!/\n\s+at /.test(answer.text), `no stack trace: ${label}`);
              if (answer.status >= 400) assert.equal(typeof answer.json?.error?.code, 'string', label);
            }
          }
        }
      }
    }
    assert.ok(calls > 500, `${calls} calls`);
    // None of it made a job, or reached an object's prototype.
    const jobs = (await master.call('GET', '/api/v1/jobs?limit=500')).json.items;
    assert.deepEqual(
      jobs.map((j: { name: string }) => j.name),
      ['fuzz'],
    );
    assert.equal(({} as { admin?: unknown }).admin, undefined);
    assert.equal((await master.call('GET', '/api/v1/health')).status, 200);
  });
});
