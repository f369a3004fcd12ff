import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fleetFacts } from '../../master/alerts/fleet-facts.js';
import type { RunCounters, SqlStore } from '../../shared/ports/sql-store.js';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import { processReport, TEST_HOST_FACTS } from '../helpers/agent-reports.js';
import { runCli } from '../helpers/cli.js';
import { AGENT_LOST_AFTER_MS, jobBody, startTestMaster, type TestMaster } from '../helpers/master-api.js';

const proc = (slot: number, fields: Partial<ProcessReport> = {}): ProcessReport =>
  processReport(slot, { startedAt: Date.now() - 60_000, ...fields });

const counters = (c: Partial<RunCounters>): RunCounters => ({
  done: 0,
  failed: 0,
  notModified: 0,
  queued: 0,
  inFlight: 0,
  pagesPerSecond: 0,
  ...c,
});

/**
 * `ackcrawl status` as a real process against an in-process master: runs put in through the API
 * (and a scheduler's report into SQL, as run-sync writes it), agents through the agent link, an
 * alert raised by the engine over those rows.
 */
describe('ackcrawl status (one look at a master)', () => {
  let master: TestMaster;
  let env: NodeJS.ProcessEnv;
  let store: SqlStore | undefined;
  const runs: Record<'queued' | 'running' | 'paused' | 'succeeded', string> = {
    queued: '',
    running: '',
    paused: '',
    succeeded: '',
  };
  let agentOnline = '';
  let agentLost = '';

  before(async () => {
    master = await startTestMaster({
      startAt: Date.now(),
      alerting: {
        lostAgents: () => fleetFacts(store!.agents).lostAgents(),
        crashLoops: () => fleetFacts(store!.agents).crashLoops(),
      },
    });
    store = master.store;
    env = { ACKCRAWL_MASTER_URL: master.url, ACKCRAWL_TOKEN: master.adminToken };
    const asAgent = async (id: string, what: string, body: unknown) => {
      const answer = await master.call('POST', `/api/v1/agents/${id}/${what}`, {
        token: master.agentToken,
        body,
      });
      assert.equal(answer.status, 200, answer.text);
    };
    const agent = async (processes: ProcessReport[]) => {
      const id = `st-${randomUUID().slice(0, 8)}`;
      await asAgent(id, 'register', {
        name: id,
        hostname: 'host-s',
        url: 'http://127.0.0.1:9/',
        facts: TEST_HOST_FACTS,
        processes: processes.length,
      });
      await asAgent(id, 'heartbeat', { facts: TEST_HOST_FACTS, processes });
      return id;
    };
    // One agent goes quiet past the lost bound; the other beats after that.
    agentLost = await agent([proc(0)]);
    master.clock.advance(AGENT_LOST_AFTER_MS + 1_000);
    agentOnline = await agent([proc(0), proc(1, { state: 'crash-loop', restarts: 5, pid: null })]);

    const rule = await master.call('POST', '/api/v1/alert-rules', {
      body: { name: 'loops', kind: 'process.crash_loop', params: {} },
    });
    assert.equal(rule.status, 201, rule.text);
    await master.alerting.evaluateNow();

    const job = await master.call('POST', '/api/v1/jobs', { body: jobBody({ name: 'status-docs' }) });
    assert.equal(job.status, 201, job.text);
    const start = async () => {
      // A tick apart, so newest first is one order.
      master.clock.advance(500);
      const run = await master.call('POST', `/api/v1/jobs/${job.json.id}/runs`);
      assert.equal(run.status, 201, run.text);
      return run.json.id as string;
    };
    for (const name of ['succeeded', 'paused', 'running', 'queued'] as const) runs[name] = await start();
    const now = master.clock.now();
    // What a scheduler's run sync writes: it takes the run, then reports its counters.
    for (const id of [runs.running, runs.succeeded]) {
      assert.ok(
        await store.runs.transition(id, ['queued'], 'running', {
          startedAt: now,
          schedulerId: 's1',
          heartbeatAt: now,
        }),
      );
    }
    await store.runs.report([
      {
        id: runs.running,
        schedulerId: 's1',
        at: now,
        counters: counters({ done: 120, failed: 3, queued: 40, inFlight: 7, pagesPerSecond: 12.5 }),
      },
    ]);
    assert.ok(await store.runs.transition(runs.succeeded, ['running'], 'succeeded', { endedAt: now }));
    assert.equal((await master.call('POST', `/api/v1/runs/${runs.paused}/pause`)).status, 200);
  });
  after(() => master.close());

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli(['status', ...args], { ...env, ...extra }, 30_000);

  test('a table per section: the runs not final with their counters, totals, the fleet, active alerts', async () => {
    const out = await cli([]);
    assert.equal(out.code, 0, out.stderr);
    const text = out.stdout;
    assert.match(
      text,
      new RegExp(
        `^master ${master.url.replace(/[.]/g, '\\.')}, at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ$`,
        'm',
      ),
    );
    assert.match(text, /^RUNS \(not final\)$/m);
    assert.match(text, /^RUN\s+JOB\s+STATE\s+DONE\s+FAILED\s+QUEUED\s+IN FLIGHT\s+PAGES\/S\s+WAITING$/m);
    assert.match(
      text,
      new RegExp(`^${runs.running}\\s+status-docs\\s+running\\s+120\\s+3\\s+40\\s+7\\s+12\\.5\\s+-$`, 'm'),
    );
    assert.match(
      text,
      new RegExp(
        `^${runs.queued}\\s+status-docs\\s+queued\\s+0\\s+0\\s+0\\s+0\\s+0\\.0\\s+no scheduler has taken the run yet$`,
        'm',
      ),
    );
    assert.match(text, new RegExp(`^${runs.paused}\\s+status-docs\\s+paused\\s`, 'm'));
    assert.ok(!text.includes(runs.succeeded), 'a final run is not shown without --all');
    assert.match(
      text,
      /^total: 3 runs, 1 active at 12\.5 pages\/s, 7 in flight, 40 queued, 120 done, 3 failed$/m,
    );
    assert.match(text, /^FLEET\nagents: 2 \(1 online, 1 lost\)$/m);
    // The lost agent's process is shown lost, as the API shows it.
    assert.match(text, /^crawler processes: 3 \(1 running, 1 crash-loop, 1 lost\), 3 wanted$/m);
    assert.match(text, /^ALERTS\n1 active$/m);
    assert.match(
      text,
      new RegExp(`^TYPE\\s+SUBJECT\\s+OPENED\\nprocess\\.crash_loop\\s+${agentOnline}\\S*\\s+\\d{4}-`, 'm'),
    );
  });

  test('--json: one object with runs, totals, fleet, alerts and the time', async () => {
    const out = await cli(['--json']);
    assert.equal(out.code, 0, out.stderr);
    const status = JSON.parse(out.stdout);
    assert.deepEqual(Object.keys(status).sort(), [
      'alerts',
      'at',
      'fleet',
      'more',
      'runs',
      'scope',
      'source',
      'totals',
    ]);
    assert.ok(Math.abs(Date.parse(status.at) - Date.now()) < 60_000);
    assert.deepEqual(status.source, { kind: 'master', url: master.url });
    assert.equal(status.scope, 'not-final');
    assert.deepEqual(
      status.runs.map((r: { id: string; state: string }) => [r.id, r.state]).sort(),
      [
        [runs.queued, 'queued'],
        [runs.running, 'running'],
        [runs.paused, 'paused'],
      ].sort(),
    );
    const running = status.runs.find((r: { id: string }) => r.id === runs.running);
    assert.equal(running.jobName, 'status-docs');
    assert.deepEqual(
      running.counters,
      counters({ done: 120, failed: 3, queued: 40, inFlight: 7, pagesPerSecond: 12.5 }),
    );
    assert.equal(status.totals.pagesPerSecond, 12.5);
    assert.equal(status.totals.active, 1);
    assert.equal(status.fleet.agents.total, 2);
    assert.equal(status.fleet.agents.byState.online, 1);
    assert.equal(status.fleet.agents.byState.lost, 1);
    assert.equal(status.fleet.processes.byState['crash-loop'], 1);
    assert.equal(status.alerts.active, 1);
    assert.equal(status.alerts.newest[0].type, 'process.crash_loop');
    assert.ok(String(status.alerts.newest[0].subject).startsWith(agentOnline));
    assert.ok(agentLost !== agentOnline);
  });

  test('--all: the newest runs of any state, --limit of them, and says when there are more', async () => {
    const all = JSON.parse((await cli(['--all', '--json'])).stdout);
    assert.equal(all.scope, 'all');
    assert.equal(all.runs.length, 4);
    assert.equal(all.runs.find((r: { id: string }) => r.id === runs.succeeded)?.state, 'succeeded');
    assert.equal(all.more, false);
    const two = await cli(['--all', '--limit', '2']);
    assert.equal(two.code, 0, two.stderr);
    assert.match(two.stdout, /^RUNS \(newest 2, more not shown\)$/m);
    // Newest first: the last two started.
    assert.match(two.stdout, new RegExp(`^${runs.queued}\\s`, 'm'));
    assert.match(two.stdout, new RegExp(`^${runs.running}\\s`, 'm'));
  });

  test('no token, a wrong one, no master, a bad --limit: a message and a non-zero exit', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ackcrawl-status-cli-'));
    try {
      const noToken = await cli([], { ACKCRAWL_TOKEN: '', ACKCRAWL_DATA_DIR: empty });
      assert.equal(noToken.code, 2);
      assert.match(noToken.stderr, /no token: set ACKCRAWL_TOKEN/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const fromFile = await cli(['--json'], { ACKCRAWL_TOKEN: '', ACKCRAWL_DATA_DIR: master.dir });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    const wrong = await cli([], { ACKCRAWL_TOKEN: 'ackp_not-a-token' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /401 UNAUTHORIZED/);
    const away = await cli([], { ACKCRAWL_MASTER_URL: 'http://127.0.0.1:1' });
    assert.equal(away.code, 1);
    assert.match(away.stderr, /cannot reach the master at http:\/\/127\.0\.0\.1:1/);
    const limit = await cli(['--limit', '0']);
    assert.equal(limit.code, 2);
    assert.match(limit.stderr, /--limit is a whole number from 1 to 500/);
  });
});
