import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startTestMaster, type TestMaster } from '../helpers/master-api.js';

describe('ackcrawl jobs (the CLI of the master API)', () => {
  let master: TestMaster;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    master = await startTestMaster();
    env = { ACKCRAWL_MASTER_URL: master.url, ACKCRAWL_TOKEN: master.adminToken };
  });
  after(() => master.close());

  const cli = async (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli(['jobs', ...args], { ...env, ...extra }, 30_000);

  test('create, list, show, run, pause, resume, cancel: tables for people, --json for scripts', async () => {
    const created = await cli([
      'create',
      'cli-job',
      'https://a.example.test/',
      '--set',
      'maxPages=25',
      '--set',
      'allowPrivate=true',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const job = JSON.parse(created.stdout);
    assert.equal(job.settings.maxPages, 25);
    assert.equal(job.settings.allowPrivate, true);
    assert.deepEqual(job.settings.seeds, ['https://a.example.test/']);

    const list = await cli(['list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^ID\s+NAME\s+SEEDS\s+MAX PAGES\s+UPDATED$/m);
    assert.match(
      list.stdout,
      new RegExp(`^${job.id}\\s+cli-job\\s+https://a\\.example\\.test/\\s+25\\s`, 'm'),
    );
    const listJson = JSON.parse((await cli(['list', '--json'])).stdout);
    assert.ok(listJson.items.some((j: { id: string }) => j.id === job.id));

    const started = await cli(['run', job.id, '--json']);
    assert.equal(started.code, 0, started.stderr);
    const run = JSON.parse(started.stdout);
    assert.equal(run.state, 'queued');

    const shown = await cli(['show', job.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /name: cli-job/);
    assert.match(shown.stdout, /maxPages: 25/);
    assert.match(shown.stdout, new RegExp(`^${run.id}\\s+queued\\s+0\\s+0`, 'm'));
    const runShown = await cli(['show', run.id]);
    assert.equal(runShown.code, 0, runShown.stderr);
    assert.match(runShown.stdout, /state: queued \(no scheduler has taken the run yet\)/);

    assert.match((await cli(['pause', run.id])).stdout, /is paused/);
    assert.match((await cli(['resume', run.id])).stdout, /is queued/);
    assert.match((await cli(['cancel', run.id])).stdout, /is cancelled/);
    const again = await cli(['resume', run.id]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /409 RUN_STATE_CONFLICT: run \S+ is cancelled/);
  });

  test('show: a started run with a time limit says when the limit ends it', async () => {
    const job = JSON.parse(
      (
        await cli([
          'create',
          'timed-job',
          'https://t.example.test/',
          '--set',
          'maxDurationMs=60000',
          '--json',
        ])
      ).stdout,
    );
    assert.equal(job.settings.maxDurationMs, 60_000);
    const run = JSON.parse((await cli(['run', job.id, '--json'])).stdout);
    assert.doesNotMatch((await cli(['show', run.id])).stdout, /time limit/, 'not started: not timed');
    const startedAt = Date.UTC(2026, 0, 1, 12);
    await master.store.runs.transition(run.id, ['queued'], 'running', { startedAt });
    const shown = await cli(['show', run.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^time limit: cancelled at 2026-01-01 12:01:00Z if not done$/m);
  });

  test('why: where a URL is in a run, answered by the master (here from SQL: the run is queued)', async () => {
    const job = JSON.parse((await cli(['create', 'why-job', 'https://w.example.test/', '--json'])).stdout);
    const run = JSON.parse((await cli(['run', job.id, '--json'])).stdout);
    const queued = await cli(['why', run.id, 'https://w.example.test/a']);
    assert.equal(queued.code, 0, queued.stderr);
    assert.match(
      queued.stdout,
      /^https:\/\/w\.example\.test\/a\n {2}queued: .*no scheduler has taken it yet/m,
    );
    const outside = JSON.parse((await cli(['why', run.id, 'https://elsewhere.test/', '--json'])).stdout);
    assert.equal(outside.state, 'out-of-scope');
    const bad = await cli(['why', run.id, 'not a url']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /400 URL_INVALID/);
    const missing = await cli(['why', 'no-such-run', 'https://w.example.test/']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /404 RUN_NOT_FOUND/);
  });

  test("the API's problems are printed field by field; without a token it reads the admin-token file", async () => {
    const bad = await cli(['create', 'broken', 'ftp://x.test/', '--set', 'maxPages=-3']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /400 INVALID_REQUEST/);
    assert.match(bad.stderr, /seeds\.0: /);
    assert.match(bad.stderr, /maxPages: /);
    const fromFile = await cli(['list', '--json'], { ACKCRAWL_TOKEN: '', ACKCRAWL_DATA_DIR: master.dir });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    const wrong = await cli(['list'], { ACKCRAWL_TOKEN: 'ackp_not-a-token' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /401 UNAUTHORIZED/);
    const away = await cli(['list'], { ACKCRAWL_MASTER_URL: 'http://127.0.0.1:1' });
    assert.equal(away.code, 1);
    assert.match(away.stderr, /cannot reach the master at http:\/\/127\.0\.0\.1:1/);
  });
});
