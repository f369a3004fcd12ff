import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import { processReport, TEST_HOST_FACTS } from '../helpers/agent-reports.js';
import { runCli } from '../helpers/cli.js';
import { startTestMaster, type TestMaster } from '../helpers/master-api.js';

/** A process of a heartbeat, started a minute ago by the real clock (the CLI reads ages with it). */
const proc = (slot: number, fields: Partial<ProcessReport> = {}): ProcessReport =>
  processReport(slot, { startedAt: Date.now() - 60_000, ...fields });

/** `ackcrawl fleet …` as a real process against an in-process master, agents speaking the agent link. */
describe('ackcrawl fleet (the CLI of the fleet API)', () => {
  let master: TestMaster;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    master = await startTestMaster({ startAt: Date.now() });
    env = { ACKCRAWL_MASTER_URL: master.url, ACKCRAWL_TOKEN: master.adminToken };
  });
  after(() => master.close());

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli(['fleet', ...args], { ...env, ...extra }, 30_000);
  const asAgent = async (id: string, what: 'register' | 'heartbeat', body: unknown) => {
    const answer = await master.call('POST', `/api/v1/agents/${id}/${what}`, {
      token: master.agentToken,
      body,
    });
    assert.equal(answer.status, 200, answer.text);
    return answer.json as {
      desiredProcesses: number;
      drain: boolean;
      stoppedSlots: number[];
      restarts: object;
    };
  };
  const newAgent = async (processes: ProcessReport[]) => {
    const id = `cli-${randomUUID().slice(0, 8)}`;
    await asAgent(id, 'register', {
      name: id,
      hostname: 'host-a',
      // Nothing listens there: the nudge fails and is only logged.
      url: 'http://127.0.0.1:9/',
      facts: TEST_HOST_FACTS,
      processes: processes.length,
    });
    await asAgent(id, 'heartbeat', { facts: TEST_HOST_FACTS, processes });
    return id;
  };

  test('list and show: agents and their processes as tables, the API answer with --json', async () => {
    const id = await newAgent([
      proc(0),
      proc(1, { state: 'crash-loop', restarts: 5, pid: null, inFlight: 0 }),
    ]);

    const list = await cli(['list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^AGENT\s+STATE\s+HOST\s+PROCESSES\s+LAST SEEN\s+LOAD\/CPUS\s+MEMORY\s+DISK$/m);
    // One of two wanted runs; load 0.5 on 2 CPUs; 2 of 4 GB memory, 10 of 20 GB disk used.
    assert.match(
      list.stdout,
      new RegExp(
        `^${id}\\s+online\\s+host-a\\s+1/2\\s+\\d+ s ago\\s+0\\.50/2\\s+2\\.0/4\\.0 GB\\s+10\\.0/20\\.0 GB$`,
        'm',
      ),
    );
    const listed = JSON.parse((await cli(['list', '--json'])).stdout) as { items: { id: string }[] };
    assert.ok(listed.items.some((a) => a.id === id));

    const shown = await cli(['show', id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^agent ${id} \\(${id}\\)$`, 'm'));
    assert.match(shown.stdout, /^state: online$/m);
    assert.match(shown.stdout, /^processes: 1 running, wanted 2$/m);
    assert.match(
      shown.stdout,
      /^SLOT\s+PID\s+STATE\s+RESTARTS\s+IN FLIGHT\s+PAGES\s+ERRORS\s+RSS MB\s+CPU S\s+UPTIME$/m,
    );
    assert.match(shown.stdout, /^0\s+2000\s+running\s+0\s+2\s+10\s+0\s+95\s+3\.5\s+6\d s$/m);
    assert.match(shown.stdout, /^1\s+-\s+crash-loop\s+5\s+0\s+10\s+0\s+95\s+3\.5\s+-$/m);
    const json = JSON.parse((await cli(['show', id, '--json'])).stdout);
    assert.equal(json.id, id);
    assert.deepEqual(
      json.processes.map((p: { slot: number; state: string }) => [p.slot, p.state]),
      [
        [0, 'running'],
        [1, 'crash-loop'],
      ],
    );
  });

  test('scale, stop, restart and drain become the desired state the API shows and the agent is answered', async () => {
    const id = await newAgent([proc(0), proc(1)]);
    const scaled = await cli(['scale', id, '4']);
    assert.equal(scaled.code, 0, scaled.stderr);
    assert.match(scaled.stdout, new RegExp(`^agent ${id}: 4 crawler processes wanted$`, 'm'));
    assert.match(scaled.stdout, /^processes: 2 running, wanted 4$/m);
    assert.equal((await master.call('GET', `/api/v1/agents/${id}`)).json.desiredProcesses, 4);

    const stopped = await cli(['stop', id, '1', '--json']);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.deepEqual(JSON.parse(stopped.stdout).stoppedSlots, [1]);
    const restarted = await cli(['restart', id, '2']);
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, new RegExp(`^agent ${id}: process 2 to restart$`, 'm'));
    let desired = await asAgent(id, 'heartbeat', { facts: TEST_HOST_FACTS, processes: [proc(0), proc(1)] });
    assert.deepEqual(desired, {
      desiredProcesses: 4,
      drain: false,
      stoppedSlots: [1],
      restarts: { 2: 1 },
      heartbeatMs: 2000,
    });

    const drained = await cli(['drain', id]);
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, /^state: draining$/m);
    assert.match(drained.stdout, /wanted drain/);
    const seen = (await master.call('GET', `/api/v1/agents/${id}`)).json;
    assert.equal(seen.state, 'draining');
    assert.equal(seen.drain, true);
    desired = await asAgent(id, 'heartbeat', { facts: TEST_HOST_FACTS, processes: [] });
    assert.equal(desired.drain, true);
    // A count ends the drain.
    assert.equal((await cli(['scale', id, '1'])).code, 0);
    const after = (await master.call('GET', `/api/v1/agents/${id}`)).json;
    assert.equal(after.drain, false);
    assert.equal(after.desiredProcesses, 1);
  });

  test('forget: a live agent is refused; one that said goodbye leaves the fleet', async () => {
    const id = await newAgent([proc(0)]);
    const alive = await cli(['forget', id]);
    assert.notEqual(alive.code, 0);
    assert.match(alive.stderr, /409 AGENT_ALIVE: agent .* is online: drain and stop it first/);
    const bye = await master.call('POST', `/api/v1/agents/${id}/goodbye`, { token: master.agentToken });
    assert.equal(bye.status, 204, bye.text);
    const gone = await cli(['forget', id]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.equal(gone.stdout.trim(), `agent ${id}: forgotten`);
    assert.equal((await master.call('GET', `/api/v1/agents/${id}`)).status, 404);
  });

  test('unknown agent or slot, bad numbers, no token, no master: a message and a non-zero exit', async () => {
    const id = await newAgent([proc(0)]);
    const unknown = await cli(['show', 'no-such-agent']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^ackcrawl: 404 AGENT_NOT_FOUND: no agent no-such-agent$/m);
    const slot = await cli(['stop', id, '7']);
    assert.equal(slot.code, 2);
    assert.match(slot.stderr, /404 AGENT_SLOT_NOT_FOUND: agent \S+ has slots 0 to 0; there is no slot 7/);
    for (const bad of [
      ['scale', id, 'many'],
      ['scale', id, '-1'],
      ['restart', id, '1.5'],
    ]) {
      const refused = await cli(bad);
      assert.equal(refused.code, 2, bad.join(' '));
      assert.match(refused.stderr, /is a whole number/);
    }
    assert.equal(
      (await master.call('GET', `/api/v1/agents/${id}`)).json.desiredProcesses,
      1,
      'nothing changed',
    );

    const empty = mkdtempSync(join(tmpdir(), 'ackcrawl-fleet-cli-'));
    try {
      const noToken = await cli(['list'], { ACKCRAWL_TOKEN: '', ACKCRAWL_DATA_DIR: empty });
      assert.equal(noToken.code, 2);
      assert.match(noToken.stderr, /no token: set ACKCRAWL_TOKEN/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const wrong = await cli(['list'], { ACKCRAWL_TOKEN: 'ackp_not-a-token' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /401 UNAUTHORIZED/);
    const away = await cli(['list'], { ACKCRAWL_MASTER_URL: 'http://127.0.0.1:1' });
    assert.equal(away.code, 1);
    assert.match(away.stderr, /cannot reach the master at http:\/\/127\.0\.0\.1:1/);
  });
});
