import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRunRetention } from '../../master/runs/retention.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import { job, run } from '../contract/sql-store/expect.js';
import { result } from '../contract/sql-store/logs-results.cases.js';
import { assertError, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';

const DAY = 86_400_000;

describe('run retention (master, SQLite store)', () => {
  let dir: string;
  let store: SqlStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-retention-'));
    store = await openSqlStore(join(dir, 'ackcrawl.db'));
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('deletes the runs that ended before the period, oldest first, a hundred a pass; keeps the rest', async () => {
    const j = await store.jobs.create(job());
    const now = 400 * DAY;
    const made: string[] = [];
    for (let i = 0; i < 105; i++) {
      const r = await store.runs.create(
        run(j.id, { id: `old-${String(i).padStart(3, '0')}`, state: 'succeeded', endedAt: DAY + i }),
      );
      made.push(r.id);
    }
    await store.results.upsert([result('cap-old', { runId: 'old-000', jobId: j.id })]);
    await store.runs.create(run(j.id, { id: 'recent', state: 'failed', endedAt: now - 10 * DAY }));
    await store.runs.create(run(j.id, { id: 'open', state: 'running', endedAt: null }));
    const retention = startRunRetention({
      runs: store.runs,
      days: 30,
      everyMs: 3_600_000,
      now: () => now,
      logger: silentLogger(),
    });
    try {
      assert.deepEqual(await retention.sweep(), made.slice(0, 100));
      assert.deepEqual(await retention.sweep(), made.slice(100));
      assert.deepEqual(await retention.sweep(), []);
      assert.equal(await store.runs.get('old-000'), null);
      assert.deepEqual((await store.results.list('old-000')).items, []);
      assert.ok(await store.runs.get('recent'));
      assert.ok(await store.runs.get('open'));
      assert.ok(await store.jobs.get(j.id), 'the job stays');
    } finally {
      await retention.close();
    }
  });
});

describe('DELETE /runs/{id}', () => {
  let master: TestMaster;
  before(async () => {
    master = await startTestMaster();
  });
  after(() => master.close());

  test('an ended run goes with its failures and results; an open one is 409; only an admin may', async () => {
    const created = await master.call('POST', '/api/v1/jobs', { body: jobBody({ name: 'to delete' }) });
    const jobId = created.json.id as string;
    const runId = (await master.call('POST', `/api/v1/jobs/${jobId}/runs`)).json.id as string;
    await master.store.results.upsert([result('cap-1', { runId, jobId })]);
    await master.store.logs.append([
      {
        runId,
        url: 'http://127.0.0.1/x',
        code: 'TIMEOUT',
        attempts: 3,
        lastError: 'slow',
        final: true,
        at: 1,
      },
    ]);
    assertError(await master.call('DELETE', `/api/v1/runs/${runId}`), 409, 'RUN_STATE_CONFLICT');
    const operator = (
      await master.call('POST', '/api/v1/tokens', { body: { name: 'op', scopes: ['read', 'operate'] } })
    ).json.secret as string;
    assert.equal(
      (await master.call('POST', `/api/v1/runs/${runId}/cancel`, { token: operator })).status,
      200,
    );
    assertError(await master.call('DELETE', `/api/v1/runs/${runId}`, { token: operator }), 403, 'FORBIDDEN');

    const deleted = await master.call('DELETE', `/api/v1/runs/${runId}`);
    assert.equal(deleted.status, 204, deleted.text);
    assertError(await master.call('GET', `/api/v1/runs/${runId}`), 404, 'RUN_NOT_FOUND');
    assertError(await master.call('DELETE', `/api/v1/runs/${runId}`), 404, 'RUN_NOT_FOUND');
    assert.deepEqual((await master.store.results.list(runId)).items, []);
    assert.deepEqual((await master.store.logs.list(runId)).items, []);
    assert.equal((await master.call('GET', `/api/v1/jobs/${jobId}`)).status, 200, 'the job stays');
  });
});
