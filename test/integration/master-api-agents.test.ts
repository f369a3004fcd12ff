import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { processReport, TEST_HOST_FACTS } from '../helpers/agent-reports.js';
import {
  AGENT_LOST_AFTER_MS,
  assertError,
  startTestMaster,
  sweepLost,
  type TestMaster,
} from '../helpers/master-api.js';

const facts = TEST_HOST_FACTS;
const proc = processReport;

/** The fleet routes of the master's API, in-process over the real SQLite store. */
describe('master API: agents', () => {
  let master: TestMaster;
  before(async () => {
    master = await startTestMaster();
  });
  after(() => master.close());

  const asAgent = (method: string, path: string, body?: unknown) =>
    master.call(method, path, { token: master.agentToken, ...(body === undefined ? {} : { body }) });
  const register = (id: string, processes = 2) =>
    asAgent('POST', `/api/v1/agents/${id}/register`, {
      name: id,
      hostname: 'host-a',
      // Nothing listens there: the nudge fails and is only logged.
      url: 'http://127.0.0.1:9/',
      facts,
      processes,
    });

  test('an agent registers and beats; people see it with its processes; the lost bound holds', async () => {
    const id = `a-${randomUUID().slice(0, 8)}`;
    const reg = await register(id, 3);
    assert.equal(reg.status, 200, reg.text);
    assert.deepEqual(reg.json, {
      desiredProcesses: 3,
      drain: false,
      stoppedSlots: [],
      restarts: {},
      heartbeatMs: 2000,
    });
    const beat = await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, {
      facts,
      processes: [proc(0), proc(1), proc(2)],
    });
    assert.equal(beat.status, 200, beat.text);

    const one = await master.call('GET', `/api/v1/agents/${id}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.state, 'online');
    assert.equal(one.json.processes.length, 3);
    assert.equal(one.json.processes[0].state, 'running');
    assert.equal(one.json.processes[0].uptimeSeconds, 60);
    assert.equal(one.json.facts.cpus, 2);
    const list = await master.call('GET', '/api/v1/agents');
    assert.ok(list.json.items.some((a: { id: string }) => a.id === id));

    // No heartbeat for longer than the bound: shown lost at once, before any sweep.
    master.clock.advance(AGENT_LOST_AFTER_MS + 1);
    const lost = await master.call('GET', `/api/v1/agents/${id}`);
    assert.equal(lost.json.state, 'lost');
    assert.deepEqual(
      lost.json.processes.map((p: { state: string }) => p.state),
      ['lost', 'lost', 'lost'],
    );
    // The sweeper writes it into SQL for other readers (the alert engine).
    assert.ok((await sweepLost(master)).includes(id));
    assert.equal((await master.store.agents.get(id))?.state, 'lost');
    assert.deepEqual(
      (await master.store.agents.processes(id)).map((p) => p.state),
      ['lost', 'lost', 'lost'],
    );
    // It comes back with its next heartbeat.
    await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, { facts, processes: [proc(0)] });
    assert.equal((await master.call('GET', `/api/v1/agents/${id}`)).json.state, 'online');
  });

  test('a lost agent can be forgotten, with its processes; a live one cannot', async () => {
    const id = `f-${randomUUID().slice(0, 8)}`;
    await register(id, 2);
    await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, { facts, processes: [proc(0), proc(1)] });
    assertError(await master.call('DELETE', `/api/v1/agents/${id}`), 409, 'AGENT_ALIVE');
    assertError(await master.call('DELETE', '/api/v1/agents/nope'), 404, 'AGENT_NOT_FOUND');
    const reader = await master.call('POST', '/api/v1/tokens', { body: { name: 'r', scopes: ['read'] } });
    assertError(
      await master.call('DELETE', `/api/v1/agents/${id}`, { token: reader.json.secret }),
      403,
      'FORBIDDEN',
    );
    master.clock.advance(AGENT_LOST_AFTER_MS + 1);
    assert.ok((await sweepLost(master)).includes(id));
    const gone = await master.call('DELETE', `/api/v1/agents/${id}`);
    assert.equal(gone.status, 204, gone.text);
    assertError(await master.call('GET', `/api/v1/agents/${id}`), 404, 'AGENT_NOT_FOUND');
    assert.deepEqual(await master.store.agents.processes(id), []);
    // Were the host to come back, its heartbeat is refused and it registers again.
    const beat = await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, { facts, processes: [] });
    assertError(beat, 404, 'AGENT_NOT_FOUND');
  });

  test('count, stop, restart and drain become the desired state the heartbeat answers with', async () => {
    const id = `b-${randomUUID().slice(0, 8)}`;
    await register(id, 2);
    const scaled = await master.call('PUT', `/api/v1/agents/${id}/processes`, { body: { count: 4 } });
    assert.equal(scaled.status, 200, scaled.text);
    assert.equal(scaled.json.desiredProcesses, 4);
    assert.equal((await master.call('POST', `/api/v1/agents/${id}/processes/1/stop`)).status, 200);
    assert.equal((await master.call('POST', `/api/v1/agents/${id}/processes/2/restart`)).status, 200);
    let desired = (await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, { facts, processes: [] })).json;
    assert.deepEqual(desired, {
      desiredProcesses: 4,
      drain: false,
      stoppedSlots: [1],
      restarts: { 2: 1 },
      heartbeatMs: 2000,
    });
    // A re-registration (the agent restarted) keeps what the master wants.
    desired = (await register(id, 2)).json;
    assert.equal(desired.desiredProcesses, 4);
    assert.deepEqual(desired.stoppedSlots, [1]);
    // Restarting a stopped slot starts it again.
    await master.call('POST', `/api/v1/agents/${id}/processes/1/restart`);
    const drained = await master.call('POST', `/api/v1/agents/${id}/drain`);
    assert.equal(drained.json.state, 'draining');
    desired = (await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, { facts, processes: [] })).json;
    assert.deepEqual(desired, {
      desiredProcesses: 4,
      drain: true,
      stoppedSlots: [],
      restarts: { 1: 1, 2: 1 },
      heartbeatMs: 2000,
    });
    const back = await master.call('PUT', `/api/v1/agents/${id}/processes`, { body: { count: 1 } });
    assert.equal(back.json.state, 'online');
    assert.equal(back.json.drain, false);
    const gone = await asAgent('POST', `/api/v1/agents/${id}/goodbye`);
    assert.equal(gone.status, 204);
    assert.equal((await master.call('GET', `/api/v1/agents/${id}`)).json.state, 'stopped');
  });

  test('bad input, unknown ids, and credentials: typed answers, never a 500', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    await register(id, 2);
    assertError(await master.call('GET', '/api/v1/agents/nope'), 404, 'AGENT_NOT_FOUND');
    assertError(
      await master.call('PUT', '/api/v1/agents/nope/processes', { body: { count: 1 } }),
      404,
      'AGENT_NOT_FOUND',
    );
    assertError(
      await master.call('POST', `/api/v1/agents/${id}/processes/7/stop`),
      404,
      'AGENT_SLOT_NOT_FOUND',
    );
    assertError(
      await master.call('PUT', `/api/v1/agents/${id}/processes`, { body: { count: -1 } }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await master.call('PUT', `/api/v1/agents/${id}/processes`, { body: { count: 'x' } }),
      400,
      'INVALID_REQUEST',
    );
    assertError(await master.call('POST', `/api/v1/agents/${id}/processes/x/stop`), 400, 'INVALID_REQUEST');
    assertError(
      await asAgent('POST', `/api/v1/agents/${id}/heartbeat`, {
        facts,
        processes: [proc(0, { state: 'zombie' as never })],
      }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await asAgent('POST', '/api/v1/agents/unknown-agent/heartbeat', { facts, processes: [] }),
      404,
      'AGENT_NOT_FOUND',
    );
    // People's tokens are not agent credentials, and the agent credential is no person's token.
    assertError(
      await master.call('POST', `/api/v1/agents/${id}/heartbeat`, { body: { facts, processes: [] } }),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await master.call('GET', '/api/v1/agents', { token: master.agentToken }),
      401,
      'UNAUTHORIZED',
    );
    assertError(await master.call('GET', '/api/v1/agents', { token: null }), 401, 'UNAUTHORIZED');
    const reader = await master.call('POST', '/api/v1/tokens', {
      body: { name: 'reader', scopes: ['read'] },
    });
    const token = reader.json.secret as string;
    assert.equal((await master.call('GET', '/api/v1/agents', { token })).status, 200);
    assertError(await master.call('POST', `/api/v1/agents/${id}/drain`, { token }), 403, 'FORBIDDEN');
  });
});
