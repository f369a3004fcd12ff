import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LiveSnapshot } from '../../master/dashboard/live-snapshot.js';
import { assertError, callServer, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';
import { waitFor } from '../helpers/wait-for.js';

interface SseEvent {
  event: string;
  data: unknown;
}

/** Opens GET /api/v1/live and collects its events until close() is called. */
function openLive(port: number, token: string) {
  const events: SseEvent[] = [];
  let status = 0;
  let headers: Record<string, unknown> = {};
  let buffer = '';
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/api/v1/live',
    headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` },
    agent: false,
  });
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
    headers = res.headers;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.+)$/m.exec(frame)?.[1];
        const data = /^data: (.+)$/m.exec(frame)?.[1];
        if (name !== undefined && data !== undefined) events.push({ event: name, data: JSON.parse(data) });
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return {
    events,
    status: () => status,
    headers: () => headers,
    snapshots: () => events.filter((e) => e.event === 'snapshot').map((e) => e.data as LiveSnapshot),
    close: () => req.destroy(),
  };
}

describe('dashboard: files and the live stream', () => {
  let master: TestMaster;
  let assets: string;
  before(async () => {
    assets = mkdtempSync(join(tmpdir(), 'ackcrawl-ui-'));
    writeFileSync(join(assets, 'index.html'), '<!doctype html><title>ackcrawl</title>');
    writeFileSync(join(assets, 'main.js'), 'export {};');
    writeFileSync(join(assets, 'notes.txt'), 'not a served type');
    master = await startTestMaster({ dashboard: { assetsDir: assets } });
  });
  after(async () => {
    await master.close();
    rmSync(assets, { recursive: true, force: true });
  });

  test('/ sends a browser to /ui/; the files are served open, with a CSP and an ETag', async () => {
    const root = await callServer(master.port, 'GET', '/', { token: null });
    assert.equal(root.status, 302);
    assert.equal(root.headers.location, '/ui/');
    const page = await callServer(master.port, 'GET', '/ui/', { token: null });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /<title>ackcrawl<\/title>/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    const etag = String(page.headers.etag);
    const again = await callServer(master.port, 'GET', '/ui/index.html', {
      token: null,
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    const script = await callServer(master.port, 'GET', '/ui/main.js', { token: null });
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    const uplot = await callServer(master.port, 'GET', '/ui/vendor/uPlot.esm.js', { token: null });
    assert.equal(uplot.status, 200);
    assert.match(uplot.text, /export \{ uPlot as default \}|export default/);
  });

  test('a file it does not serve, or a path out of the folder, is the API 404; a POST is not a file', async () => {
    for (const path of [
      '/ui/notes.txt',
      '/ui/missing.js',
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
    ]) {
      const answer = await callServer(master.port, 'GET', path, { token: null });
      assert.equal(answer.status, 404, path);
      assert.equal(answer.json?.error?.code, 'NOT_FOUND', `${path}: ${answer.text}`);
    }
    const post = await callServer(master.port, 'POST', '/ui/index.html', { token: null });
    assert.equal(post.status, 404);
  });

  test('the files answer only the Host names the API answers (DNS rebinding)', async () => {
    const answer = await callServer(master.port, 'GET', '/ui/', {
      token: null,
      headers: { host: 'attacker.example:80' },
    });
    assertError(answer, 403, 'HOST_NOT_ALLOWED');
  });

  test('GET /api/v1/live needs a token', async () => {
    assertError(await callServer(master.port, 'GET', '/api/v1/live', { token: null }), 401, 'UNAUTHORIZED');
  });

  test('the stream sends the history, then a snapshot per read: runs with counters, rates, errors by code, the fleet', async () => {
    const live = master.live;
    assert.ok(live);
    const job = (await master.call('POST', '/api/v1/jobs', { body: jobBody() })).json;
    const run = (await master.call('POST', `/api/v1/jobs/${job.id}/runs`)).json;
    const report = async (done: number) => {
      const now = master.clock.now();
      await master.store.runs.report([
        {
          id: run.id,
          schedulerId: 'sched-1',
          counters: { done, failed: 1, notModified: 0, queued: 40, inFlight: 3, pagesPerSecond: 9 },
          at: now,
        },
      ]);
    };
    const now = master.clock.now();
    await master.store.runs.transition(run.id, ['queued'], 'running', {
      startedAt: now,
      schedulerId: 'sched-1',
      heartbeatAt: now,
    });
    await report(10);
    await live.tick();
    master.clock.advance(2_000);
    await report(30);
    await master.store.logs.append([
      {
        runId: run.id,
        url: 'https://example.test/a',
        code: 'HTTP_5XX',
        attempts: 1,
        lastError: '503',
        final: false,
        at: master.clock.now(),
      },
      {
        runId: run.id,
        url: 'https://example.test/b',
        code: 'HTTP_5XX',
        attempts: 2,
        lastError: '503',
        final: false,
        at: master.clock.now(),
      },
      {
        runId: run.id,
        url: 'https://example.test/c',
        code: 'DNS_FAILURE',
        attempts: 3,
        lastError: 'ENOTFOUND',
        final: true,
        at: master.clock.now(),
      },
    ]);
    await live.tick();

    const stream = openLive(master.port, master.adminToken);
    try {
      await waitFor(() => stream.events.length >= 2, { message: 'history and the latest snapshot' });
      assert.equal(stream.status(), 200);
      assert.match(String(stream.headers()['content-type']), /^text\/event-stream/);
      assert.equal(stream.events[0]?.event, 'history');
      const history = (stream.events[0]?.data as { points: LiveSnapshot['point'][] }).points;
      assert.equal(history.length, 2);
      assert.equal(history[0]?.runs[run.id], 9, "at the first read, the run's own rate");
      assert.equal(history[1]?.runs[run.id], 10, '20 pages in 2 s');
      assert.equal(history[1]?.pagesPerSecond, 10);
      assert.deepEqual(history[1]?.errors, { HTTP_5XX: 2, DNS_FAILURE: 1 });

      const first = stream.snapshots()[0];
      const shown = first?.runs.find((r) => r.id === run.id);
      assert.ok(shown, 'the run is in the snapshot');
      assert.equal(shown.state, 'running');
      assert.deepEqual(
        { done: shown.counters.done, queued: shown.counters.queued, inFlight: shown.counters.inFlight },
        { done: 30, queued: 40, inFlight: 3 },
      );
      assert.equal('settings' in shown, false, 'settings stay in GET /runs/{id}');

      // A later read: errors are counted once (not again), the new ones only.
      master.clock.advance(1_000);
      await report(35);
      await master.store.logs.append([
        {
          runId: run.id,
          url: 'https://example.test/d',
          code: 'TIMEOUT',
          attempts: 1,
          lastError: 'timed out',
          final: false,
          at: master.clock.now(),
        },
      ]);
      await master.store.agents.register({
        id: 'agent-1',
        name: 'agent-1',
        hostname: 'host-1',
        url: 'http://127.0.0.1:1',
        facts: {},
        at: master.clock.now(),
        desiredProcesses: 1,
      });
      await live.tick();
      await waitFor(() => stream.snapshots().length >= 2, { message: 'the next snapshot' });
      const second = stream.snapshots()[1] as LiveSnapshot;
      assert.deepEqual(second.point.errors, { TIMEOUT: 1 });
      assert.equal(second.point.runs[run.id], 5);
      assert.deepEqual(
        second.agents.map((a) => [a.id, a.state]),
        [['agent-1', 'online']],
      );

      // The scheduler goes quiet: the dashboard shows what the API shows (queued, waiting), not running.
      master.clock.advance(60_000);
      await live.tick();
      await waitFor(() => stream.snapshots().length >= 3, {
        message: 'a snapshot after the scheduler went quiet',
      });
      const third = stream.snapshots()[2] as LiveSnapshot;
      const quiet = third.runs.find((r) => r.id === run.id);
      assert.equal(quiet?.state, 'queued');
      assert.match(String(quiet?.waiting), /last reported/);
      assert.equal(third.agents[0]?.state, 'lost', 'an agent silent past the bound is shown lost');
    } finally {
      stream.close();
    }
  });
});
