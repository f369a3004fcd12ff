import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSchedulerApi } from '../../master/adapters/scheduler-api.js';
import { createSchedulerWhy } from '../../master/adapters/scheduler-why.js';
import { createSchedulerHosts } from '../../master/adapters/scheduler-hosts.js';
import { runNotHosted } from '../../scheduler/runs/run-control.js';
import type { RunHostState } from '../../shared/protocol/run-hosts.js';
import { createSchedulerApp } from '../../scheduler/http/app.js';
import { InvalidInputError } from '../../shared/errors.js';
import { createHostPolicy } from '../../shared/http/request-guards.js';
import { silentLogger } from '../../shared/logger.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import {
  STALE_AFTER_MS,
  assertError,
  jobBody,
  problemFields,
  startTestMaster,
  type TestMaster,
} from '../helpers/master-api.js';
import { waitFor } from '../helpers/wait-for.js';

const COUNTERS = { done: 7, failed: 1, queued: 30, inFlight: 2, pagesPerSecond: 3.5, notModified: 0 };

describe('master API: runs', () => {
  let master: TestMaster;
  let jobId: string;
  before(async () => {
    master = await startTestMaster();
    jobId = (await master.call('POST', '/api/v1/jobs', { body: jobBody({ maxPages: 5 }) })).json.id;
  });
  after(() => master.close());

  const startRun = async (): Promise<{ id: string; state: string }> => {
    // Runs are listed newest first: each one a millisecond after the last.
    master.clock.advance(1);
    const answer = await master.call('POST', `/api/v1/jobs/${jobId}/runs`);
    assert.equal(answer.status, 201, answer.text);
    return answer.json;
  };
  /** What a scheduler does when it takes a run up and reports on it. */
  const takeUp = async (runId: string, schedulerId = 'sched-1'): Promise<void> => {
    const now = master.clock.now();
    assert.ok(
      await master.store.runs.transition(runId, ['queued'], 'running', {
        startedAt: now,
        schedulerId,
        heartbeatAt: now,
      }),
    );
    await master.store.runs.report([{ id: runId, schedulerId, counters: COUNTERS, at: now }]);
  };

  test('POST /jobs/{id}/runs makes a queued run with a snapshot of the settings, and tells the schedulers', async () => {
    const run = await startRun();
    assert.equal(run.state, 'queued');
    const read = (await master.call('GET', `/api/v1/runs/${run.id}`)).json;
    assert.equal(read.jobId, jobId);
    assert.equal(read.scheduledBy, null, 'made through the API, not by a schedule');
    assert.equal(read.settings.maxPages, 5);
    assert.deepEqual(read.counters, {
      done: 0,
      failed: 0,
      queued: 0,
      inFlight: 0,
      pagesPerSecond: 0,
      notModified: 0,
    });
    assert.match(read.waiting, /no scheduler has taken/);
    await waitFor(() => master.commands.some((c) => c.type === 'start' && c.runId === run.id), {
      message: 'the start command',
    });
    const start = master.commands.find((c) => c.runId === run.id);
    assert.deepEqual(start, { type: 'start', runId: run.id, jobId, settings: read.settings });
    // A later edit of the job does not change the run.
    await master.call('PATCH', `/api/v1/jobs/${jobId}`, { body: { maxPages: 50 } });
    assert.equal((await master.call('GET', `/api/v1/runs/${run.id}`)).json.settings.maxPages, 5);
    await master.call('PATCH', `/api/v1/jobs/${jobId}`, { body: { maxPages: 5 } });
  });

  test('GET /runs/{id} shows the counters a scheduler reported, and running only while it reports', async () => {
    const run = await startRun();
    await takeUp(run.id);
    const live = (await master.call('GET', `/api/v1/runs/${run.id}`)).json;
    assert.equal(live.state, 'running');
    assert.equal(live.waiting, null);
    assert.deepEqual(live.counters, COUNTERS);
    assert.equal(live.schedulerId, 'sched-1');
    master.clock.advance(STALE_AFTER_MS + 1);
    const quiet = (await master.call('GET', `/api/v1/runs/${run.id}`)).json;
    assert.equal(quiet.state, 'queued', 'a run whose scheduler went quiet is not shown running');
    assert.match(quiet.waiting, /scheduler sched-1 last reported 15 s ago/);
    // It is listed by what it is shown as.
    const running = (await master.call('GET', `/api/v1/jobs/${jobId}/runs?state=running`)).json.items;
    assert.ok(!running.some((r: { id: string }) => r.id === run.id));
    const queued = (await master.call('GET', `/api/v1/jobs/${jobId}/runs?state=queued`)).json.items;
    assert.ok(queued.some((r: { id: string }) => r.id === run.id));
    await master.store.runs.report([
      { id: run.id, schedulerId: 'sched-2', counters: COUNTERS, at: master.clock.now() },
    ]);
    assert.equal(
      (await master.call('GET', `/api/v1/runs/${run.id}`)).json.state,
      'running',
      'reporting again',
    );
  });

  test('pause, resume, cancel are compare-and-set; an impossible change is 409 RUN_STATE_CONFLICT', async () => {
    const run = await startRun();
    await takeUp(run.id);
    const paused = await master.call('POST', `/api/v1/runs/${run.id}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.json.state, 'paused');
    assertError(await master.call('POST', `/api/v1/runs/${run.id}/pause`), 409, 'RUN_STATE_CONFLICT');
    const resumed = await master.call('POST', `/api/v1/runs/${run.id}/resume`);
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.json.state, 'running', 'it had started, and its scheduler reports');
    assertError(await master.call('POST', `/api/v1/runs/${run.id}/resume`), 409, 'RUN_STATE_CONFLICT');
    const cancelled = await master.call('POST', `/api/v1/runs/${run.id}/cancel`);
    assert.equal(cancelled.json.state, 'cancelled');
    assert.ok(cancelled.json.endedAt);
    assert.match(cancelled.json.error, /cancelled by bootstrap admin/);
    const resumeCancelled = await master.call('POST', `/api/v1/runs/${run.id}/resume`);
    assertError(resumeCancelled, 409, 'RUN_STATE_CONFLICT');
    assert.match(resumeCancelled.json.error.message, /is cancelled: resume needs a run that is paused/);
    assertError(await master.call('POST', `/api/v1/runs/${run.id}/cancel`), 409, 'RUN_STATE_CONFLICT');
    assertError(await master.call('POST', `/api/v1/runs/${run.id}/pause`), 409, 'RUN_STATE_CONFLICT');
    await waitFor(
      () =>
        ['pause', 'resume', 'cancel'].every((t) =>
          master.commands.some((c) => c.type === t && c.runId === run.id),
        ),
      { message: 'the three commands' },
    );
    // A run paused before it started resumes queued.
    const early = await startRun();
    assert.equal((await master.call('POST', `/api/v1/runs/${early.id}/pause`)).json.state, 'paused');
    assert.equal((await master.call('POST', `/api/v1/runs/${early.id}/resume`)).json.state, 'queued');
  });

  test('unknown runs are 404 RUN_NOT_FOUND on every run route', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/runs/nope'],
      ['POST', '/api/v1/runs/nope/pause'],
      ['POST', '/api/v1/runs/nope/resume'],
      ['POST', '/api/v1/runs/nope/cancel'],
      ['GET', '/api/v1/runs/nope/failures'],
      ['GET', '/api/v1/runs/nope/why?url=https://example.test/'],
    ] as const) {
      assertError(await master.call(method, path), 404, 'RUN_NOT_FOUND');
    }
  });

  test('GET /runs and /jobs/{id}/runs page newest first; ?state filters; bad values are 400', async () => {
    const made = [await startRun(), await startRun(), await startRun()];
    const first = (await master.call('GET', `/api/v1/jobs/${jobId}/runs?limit=2`)).json;
    assert.equal(first.items.length, 2);
    assert.deepEqual(
      first.items.map((r: { id: string }) => r.id),
      [made[2]?.id, made[1]?.id],
    );
    const second = (
      await master.call('GET', `/api/v1/jobs/${jobId}/runs?limit=2&after=${encodeURIComponent(first.next)}`)
    ).json;
    assert.equal(second.items[0]?.id, made[0]?.id);
    const all = (await master.call('GET', '/api/v1/runs?limit=500')).json.items.map(
      (r: { id: string }) => r.id,
    );
    for (const run of made) assert.ok(all.includes(run.id));
    const cancelled = (await master.call('GET', '/api/v1/runs?state=cancelled&state=paused')).json.items;
    assert.ok(cancelled.length > 0);
    assert.ok(cancelled.every((r: { state: string }) => r.state === 'cancelled' || r.state === 'paused'));
    const bad = await master.call('GET', '/api/v1/runs?state=sleeping&limit=501');
    assertError(bad, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(bad), ['query.limit', 'query.state']);
    assertError(await master.call('GET', '/api/v1/runs?after=garbage'), 400, 'SQL_BAD_CURSOR');
  });

  test('GET /runs/{id}/failures lists retries and final failures with their last error, paged', async () => {
    const run = await startRun();
    const at = master.clock.now();
    await master.store.logs.append([
      {
        runId: run.id,
        url: 'https://example.test/a',
        code: 'HTTP_503',
        attempts: 1,
        lastError: '503 Service Unavailable',
        final: false,
        at,
      },
      {
        runId: run.id,
        url: 'https://example.test/a',
        code: 'HTTP_503',
        attempts: 3,
        lastError: '503 again',
        final: true,
        at: at + 1,
      },
      {
        runId: run.id,
        url: 'https://example.test/b',
        code: 'TIMEOUT',
        attempts: 3,
        lastError: 'timed out after 60000 ms',
        final: true,
        at: at + 2,
      },
    ]);
    const all = (await master.call('GET', `/api/v1/runs/${run.id}/failures`)).json;
    assert.equal(all.items.length, 3);
    assert.equal(all.items[0].lastError, '503 Service Unavailable');
    const finals = (await master.call('GET', `/api/v1/runs/${run.id}/failures?final=true&limit=1`)).json;
    assert.deepEqual(
      [finals.items[0].url, finals.items[0].final, finals.items[0].attempts],
      ['https://example.test/a', true, 3],
    );
    const next = (
      await master.call(
        'GET',
        `/api/v1/runs/${run.id}/failures?final=true&limit=1&after=${encodeURIComponent(finals.next)}`,
      )
    ).json;
    assert.equal(next.items[0].code, 'TIMEOUT');
    assert.equal(next.next, null);
    assertError(
      await master.call('GET', `/api/v1/runs/${run.id}/failures?final=maybe`),
      400,
      'INVALID_REQUEST',
    );
  });

  test('POST …/failures/{id}/retry marks a final failure once and wakes the schedulers; the rest is refused', async () => {
    const run = await startRun();
    const other = await startRun();
    const at = master.clock.now();
    const row = (url: string, final: boolean, runId = run.id) => ({
      runId,
      url,
      code: 'HTTP_404',
      attempts: 1,
      lastError: '404 Not Found',
      final,
      at,
    });
    await master.store.logs.append([
      row('https://example.test/gone', true),
      row('https://example.test/again', false),
      row('https://example.test/elsewhere', true, other.id),
    ]);
    const [gone, again] = (await master.call('GET', `/api/v1/runs/${run.id}/failures`)).json.items;
    const [elsewhere] = (await master.call('GET', `/api/v1/runs/${other.id}/failures`)).json.items;
    assert.equal(gone.retriedAt, null);
    const retry = (runId: string, id: string) =>
      master.call('POST', `/api/v1/runs/${runId}/failures/${id}/retry`);
    const first = await retry(run.id, gone.id);
    assert.equal(first.status, 202, first.text);
    assert.deepEqual(first.json, {
      runId: run.id,
      url: 'https://example.test/gone',
      failureId: gone.id,
      retriedAt: new Date(at).toISOString(),
    });
    assert.deepEqual(master.commands.at(-1), { type: 'retry', runId: run.id });
    master.clock.advance(1_000);
    const second = await retry(run.id, gone.id);
    assert.equal(second.status, 202, second.text);
    assert.equal(second.json.retriedAt, first.json.retriedAt, 'a second retry is a no-op');
    assert.deepEqual(
      (await master.store.logs.retriesToQueue(run.id, 10)).map((l) => l.id),
      [gone.id],
      'marked once, to be queued once',
    );
    const listed = (await master.call('GET', `/api/v1/runs/${run.id}/failures?final=true`)).json.items;
    assert.deepEqual([listed[0].retriedAt, listed[0].requeuedAt], [new Date(at).toISOString(), null]);
    assertError(await retry(run.id, again.id), 409, 'FAILURE_NOT_FINAL');
    assertError(await retry(run.id, elsewhere.id), 404, 'FAILURE_NOT_FOUND');
    assertError(await retry(run.id, '123456789'), 404, 'FAILURE_NOT_FOUND');
    assertError(await retry('nope', gone.id), 404, 'RUN_NOT_FOUND');
    await master.call('POST', `/api/v1/runs/${other.id}/cancel`);
    assertError(await retry(other.id, elsewhere.id), 409, 'RUN_STATE_CONFLICT');
    const reader = await master.call('POST', '/api/v1/tokens', { body: { name: 'r', scopes: ['read'] } });
    assert.equal(reader.status, 201, reader.text);
    const refused = await master.call('POST', `/api/v1/runs/${run.id}/failures/${gone.id}/retry`, {
      token: reader.json.secret,
    });
    assertError(refused, 403, 'FORBIDDEN');
  });

  test('a command that cannot be sent does not fail the change: SQL has it, schedulers read it there', async () => {
    await master.runControl.close();
    try {
      const run = await startRun();
      const paused = await master.call('POST', `/api/v1/runs/${run.id}/pause`);
      assert.equal(paused.status, 200, paused.text);
      assert.equal((await master.store.runs.get(run.id))?.state, 'paused');
    } finally {
      await master.restart();
    }
  });

  test('runs and their state survive a restart of the app on the same SQLite file', async () => {
    const run = await startRun();
    await master.call('POST', `/api/v1/runs/${run.id}/pause`);
    const before = (await master.call('GET', `/api/v1/runs/${run.id}`)).json;
    await master.restart();
    const afterRestart = await master.call('GET', `/api/v1/runs/${run.id}`);
    assert.equal(afterRestart.status, 200, afterRestart.text);
    assert.deepEqual(afterRestart.json, before);
    assert.equal((await master.call('POST', `/api/v1/runs/${run.id}/resume`)).json.state, 'queued');
  });
});

describe('master API: why not yet?', () => {
  const CLUSTER_TOKEN = 'cluster-token-0123456789abcdef';
  const answer: WhyAnswer = {
    url: 'https://example.test/x',
    normalized: 'https://example.test/x',
    state: 'waiting',
    reason: 'the host waits 500 ms between requests',
    duplicateOf: null,
    task: null,
    host: null,
    crawler: null,
    robots: null,
  };
  let scheduler: Server;
  let schedulerApi: string;
  const asked: string[] = [];
  let master: TestMaster;
  let runId: string;
  let hostedRun = '';
  const hostItems: RunHostState[] = ['a.test', 'b.test'].map((host) => ({
    host,
    inFlight: 1,
    concurrency: 2,
    delayMs: 0,
    crawlDelayMs: null,
    nextStartAt: null,
    pausedUntil: null,
    pauseReason: null,
    queued: 3,
    fetched: 4,
    lastActiveAt: null,
  }));

  before(async () => {
    const app = createSchedulerApp({
      token: CLUSTER_TOKEN,
      hosts: createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: [] }),
      status: () => ({ status: 'idle', progress: {}, summary: null, output: '' }),
      submit: async () => ({ accepted: 0 }),
      runs: () => [],
      runHosts: (limit, id) => {
        if (id !== hostedRun) throw runNotHosted(id ?? 'default');
        return { runId: id, at: new Date(0).toISOString(), items: hostItems.slice(0, limit), note: null };
      },
      why: async (url) => {
        asked.push(url);
        if (url === 'not a url') throw new InvalidInputError('URL_INVALID', 'the URL cannot be parsed');
        return { ...answer, url };
      },
      logger: silentLogger(),
    });
    scheduler = createServer(app.callback());
    await new Promise<void>((resolve) => scheduler.listen(0, '127.0.0.1', resolve));
    schedulerApi = `http://127.0.0.1:${(scheduler.address() as AddressInfo).port}`;
    const why = createSchedulerWhy(
      createSchedulerApi({
        // The first is down: the next one is asked.
        apis: ['http://127.0.0.1:1', schedulerApi],
        token: CLUSTER_TOKEN,
        logger: silentLogger(),
      }),
    );
    const hosts = createSchedulerHosts(
      createSchedulerApi({
        apis: ['http://127.0.0.1:1', schedulerApi],
        token: CLUSTER_TOKEN,
        logger: silentLogger(),
      }),
    );
    master = await startTestMaster({ why, hosts });
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
    runId = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json.id;
    // A run a scheduler took: "why not yet?" asks the schedulers about it.
    await master.store.runs.transition(runId, ['queued'], 'running', {
      schedulerId: 's1',
      heartbeatAt: master.clock.now(),
    });
  });
  after(async () => {
    await master.close();
    scheduler.closeAllConnections();
    await new Promise((resolve) => scheduler.close(resolve));
  });

  test("GET /runs/{id}/why?url= is the scheduler's answer", async () => {
    const got = await master.call('GET', `/api/v1/runs/${runId}/why?url=${encodeURIComponent(answer.url)}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json, answer);
    assert.deepEqual(asked.at(-1), answer.url);
  });

  test("the scheduler's refusal of the URL is passed on; a missing url is 400", async () => {
    assertError(await master.call('GET', `/api/v1/runs/${runId}/why?url=not%20a%20url`), 400, 'URL_INVALID');
    const missing = await master.call('GET', `/api/v1/runs/${runId}/why`);
    assertError(missing, 400, 'INVALID_REQUEST');
    assert.deepEqual(problemFields(missing), ['query.url']);
  });

  test('a queued or ended run is answered from SQL: its scope and the failures logged of the URL', async () => {
    const askedBefore = asked.length;
    const why = async (id: string, url: string) => {
      const got = await master.call('GET', `/api/v1/runs/${id}/why?url=${encodeURIComponent(url)}`);
      assert.equal(got.status, 200, got.text);
      return got.json as WhyAnswer;
    };
    const job = (
      await master.call('POST', '/api/v1/jobs', { body: jobBody({ stripQueryParams: ['utm_*'] }) })
    ).json;
    const run = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;

    const queued = await why(run.id, 'https://example.test/a');
    assert.equal(queued.state, 'queued');
    assert.match(queued.reason, /no scheduler has taken it yet/);
    const outside = await why(run.id, 'https://elsewhere.test/a');
    assert.equal(outside.state, 'out-of-scope');
    assert.match(outside.reason, /example\.test/);
    assertError(await master.call('GET', `/api/v1/runs/${run.id}/why?url=not%20a%20url`), 400, 'URL_INVALID');

    await master.store.logs.append([
      {
        runId: run.id,
        url: 'https://example.test/gone',
        code: 'HTTP_503',
        attempts: 1,
        lastError: 'answered 503',
        final: false,
        at: 1,
      },
      {
        runId: run.id,
        url: 'https://example.test/gone',
        code: 'HTTP_404',
        attempts: 2,
        lastError: 'answered 404',
        final: true,
        at: 2,
      },
      {
        runId: run.id,
        url: 'https://example.test/flaky',
        code: 'TIMEOUT',
        attempts: 1,
        lastError: 'no answer in 30 s',
        final: false,
        at: 3,
      },
      {
        runId: run.id,
        url: 'https://example.test/private',
        code: 'ROBOTS_DENIED',
        attempts: 1,
        lastError: 'Disallow: /private',
        final: true,
        at: 4,
      },
    ]);
    await master.call('POST', `/api/v1/runs/${run.id}/cancel`);

    const failed = await why(run.id, 'HTTPS://Example.test/gone?utm_source=news');
    assert.equal(failed.state, 'failed');
    assert.equal(
      failed.normalized,
      'https://example.test/gone',
      'the spelling the run held: its parameters stripped',
    );
    assert.equal(failed.duplicateOf, 'https://example.test/gone');
    assert.match(
      failed.reason,
      /failed for good after attempt 2: HTTP_404 \(answered 404\); the run was cancelled at /,
    );
    assert.deepEqual(failed.task, {
      state: 'failed',
      attempt: 2,
      lastError: 'HTTP_404: answered 404',
      availableAt: null,
      depth: null,
      parentUrl: null,
    });
    const denied = await why(run.id, 'https://example.test/private');
    assert.equal(denied.state, 'robots-denied');
    const flaky = await why(run.id, 'https://example.test/flaky');
    assert.equal(flaky.state, 'run-ended');
    assert.match(flaky.reason, /attempt 1 had failed \(TIMEOUT\).*or the run ended before it came to it/);
    const quiet = await why(run.id, 'https://example.test/fine');
    assert.equal(quiet.state, 'run-ended');
    assert.match(quiet.reason, /logged no failure of this URL: it was fetched/);
    assert.equal(quiet.task, null);
    assert.equal(asked.length, askedBefore, 'no scheduler was asked');
  });

  test("GET /runs/{id}/hosts is the hosting scheduler's answer; other runs say why they have none", async () => {
    hostedRun = runId;
    const got = await master.call('GET', `/api/v1/runs/${runId}/hosts?limit=1`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json, {
      runId,
      at: new Date(0).toISOString(),
      items: hostItems.slice(0, 1),
      note: null,
    });
    assertError(await master.call('GET', `/api/v1/runs/${runId}/hosts?limit=101`), 400, 'INVALID_REQUEST');
    assertError(await master.call('GET', '/api/v1/runs/nope/hosts'), 404, 'RUN_NOT_FOUND');
    // Running in SQL, but no scheduler that answered hosts it (it moves, say).
    hostedRun = 'elsewhere';
    const moving = await master.call('GET', `/api/v1/runs/${runId}/hosts`);
    assert.equal(moving.status, 200, moving.text);
    assert.deepEqual(moving.json.items, []);
    assert.match(String(moving.json.note), /no scheduler hosts the run/);
    // Queued and ended runs are not asked about.
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
    const queued = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;
    const waiting = await master.call('GET', `/api/v1/runs/${queued.id}/hosts`);
    assert.equal(waiting.status, 200, waiting.text);
    assert.match(String(waiting.json.note), /queued/);
    await master.call('POST', `/api/v1/runs/${queued.id}/cancel`);
    const ended = await master.call('GET', `/api/v1/runs/${queued.id}/hosts`);
    assert.deepEqual(ended.json.items, []);
    assert.match(String(ended.json.note), /cancelled/);
  });

  test('no scheduler reachable (or it refuses the token): 503 NO_SCHEDULER', async () => {
    const down = createSchedulerWhy(
      createSchedulerApi({
        apis: ['http://127.0.0.1:1'],
        token: CLUSTER_TOKEN,
        logger: silentLogger(),
        timeoutMs: 2_000,
      }),
    );
    const wrongToken = createSchedulerWhy(
      createSchedulerApi({
        apis: [schedulerApi],
        token: 'wrong-token-0123456789abcdef',
        logger: silentLogger(),
      }),
    );
    const none = createSchedulerWhy(
      createSchedulerApi({ apis: [], token: CLUSTER_TOKEN, logger: silentLogger() }),
    );
    for (const why of [down, wrongToken, none]) {
      await assert.rejects(why.explain({ runId, schedulerId: null, url: answer.url }), {
        code: 'NO_SCHEDULER',
        status: 503,
      });
    }
    const downHosts = createSchedulerHosts(
      createSchedulerApi({
        apis: ['http://127.0.0.1:1'],
        token: CLUSTER_TOKEN,
        logger: silentLogger(),
        timeoutMs: 2_000,
      }),
    );
    const lone = await startTestMaster({ why: down, hosts: downHosts });
    try {
      const job = (await lone.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
      const run = (await lone.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;
      await lone.store.runs.transition(run.id, ['queued'], 'running', {
        schedulerId: 's1',
        heartbeatAt: lone.clock.now(),
      });
      assertError(
        await lone.call('GET', `/api/v1/runs/${run.id}/why?url=https://example.test/`),
        503,
        'NO_SCHEDULER',
      );
      assertError(await lone.call('GET', `/api/v1/runs/${run.id}/hosts`), 503, 'NO_SCHEDULER');
    } finally {
      await lone.close();
    }
  });
});
