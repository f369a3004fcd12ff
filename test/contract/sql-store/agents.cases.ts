import assert from 'node:assert/strict';
import type { AgentRegistration, ProcessRow, ProcessState } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, rejectsWith } from './expect.js';

function registration(fields: Partial<AgentRegistration> = {}): AgentRegistration {
  return {
    id: 'agent-1',
    name: 'host-a:8800',
    hostname: 'host-a',
    url: 'http://127.0.0.1:8800',
    facts: { cpus: 2, memoryBytes: 4_000_000_000 },
    at: 10_000,
    desiredProcesses: 2,
    ...fields,
  };
}

function proc(slot: number, fields: Partial<ProcessRow> = {}): Omit<ProcessRow, 'agentId' | 'reportedAt'> {
  return {
    slot,
    pid: 1000 + slot,
    state: 'running',
    startedAt: 9_000,
    restarts: 0,
    inFlight: 3,
    pagesDone: 42,
    errors: 1,
    rssBytes: 120_000_000,
    cpuSeconds: 1.25,
    ...fields,
  };
}

export function agentCases(define: DefineCase): void {
  define(
    'agents: register creates, a second register keeps the desired count and orders',
    async ({ store }) => {
      const a = await store.agents.register(registration());
      assert.equal(a.state, 'online');
      assert.equal(a.desiredProcesses, 2);
      assert.equal(a.drain, false);
      assert.deepEqual(a.orders, { stopped: [], restarts: {} });
      assert.equal(a.registeredAt, 10_000);
      assert.deepEqual(a.facts, { cpus: 2, memoryBytes: 4_000_000_000 });
      await store.agents.setDesired('agent-1', { desiredProcesses: 5 });
      const again = await store.agents.register(
        registration({ at: 20_000, url: 'http://127.0.0.1:9900', desiredProcesses: 1 }),
      );
      assert.equal(again.desiredProcesses, 5, "the master's count wins");
      assert.equal(again.url, 'http://127.0.0.1:9900');
      assert.equal(again.registeredAt, 10_000);
      assert.equal(again.lastHeartbeatAt, 20_000);
      assert.deepEqual(await store.agents.get('agent-1'), again);
      assert.equal(await store.agents.get('missing'), null);
    },
  );

  define('agents: a heartbeat replaces the process rows; unknown agents get null', async ({ store }) => {
    await store.agents.register(registration());
    const at = 11_000;
    assert.ok(
      await store.agents.heartbeat('agent-1', { facts: { load: [1] }, at, processes: [proc(0), proc(1)] }),
    );
    let rows = await store.agents.processes('agent-1');
    assert.deepEqual(rows, [
      { ...proc(0), agentId: 'agent-1', reportedAt: at },
      { ...proc(1), agentId: 'agent-1', reportedAt: at },
    ]);
    const next = await store.agents.heartbeat('agent-1', {
      facts: { load: [2] },
      at: 12_000,
      processes: [proc(1, { state: 'crash-loop', pid: null, startedAt: null, restarts: 5 })],
    });
    assert.equal(next?.lastHeartbeatAt, 12_000);
    assert.deepEqual(next?.facts, { load: [2] });
    rows = await store.agents.processes('agent-1');
    assert.deepEqual(
      rows.map((r) => [r.slot, r.state, r.pid, r.restarts]),
      [[1, 'crash-loop', null, 5]],
    );
    assert.deepEqual(
      (await store.agents.processesIn('crash-loop')).map((r) => [r.agentId, r.slot]),
      [['agent-1', 1]],
    );
    assert.equal(await store.agents.heartbeat('missing', { facts: {}, at, processes: [] }), null);
    await rejectsWith(
      store.agents.heartbeat('agent-1', {
        facts: {},
        at,
        processes: [proc(0, { state: 'zombie' as ProcessState })],
      }),
      'SQL_INVALID_VALUE',
      { field: 'state' },
    );
    // A refused report changed nothing.
    assert.equal((await store.agents.processes('agent-1')).length, 1);
    const many = Array.from({ length: 130 }, (_, i) => proc(i));
    await store.agents.heartbeat('agent-1', { facts: {}, at: 13_000, processes: many });
    assert.equal((await store.agents.processes('agent-1')).length, 130);
  });

  define('agents: drain, count and slot orders; a count ends a drain', async ({ store }) => {
    await store.agents.register(registration());
    const drained = await store.agents.setDesired('agent-1', { drain: true });
    assert.equal(drained?.state, 'draining');
    assert.equal(drained?.drain, true);
    assert.equal(
      (await store.agents.heartbeat('agent-1', { facts: {}, at: 11_000, processes: [] }))?.state,
      'draining',
    );
    const stopped = await store.agents.setDesired('agent-1', {
      orders: (o) => ({ ...o, stopped: [...o.stopped, 3, 1, 3] }),
    });
    assert.deepEqual(stopped?.orders, { stopped: [1, 3], restarts: {} });
    const restarted = await store.agents.setDesired('agent-1', {
      orders: (o) => ({
        stopped: o.stopped.filter((s) => s !== 1),
        restarts: { ...o.restarts, 1: (o.restarts['1'] ?? 0) + 1 },
      }),
    });
    assert.deepEqual(restarted?.orders, { stopped: [3], restarts: { 1: 1 } });
    const counted = await store.agents.setDesired('agent-1', { desiredProcesses: 4, drain: false });
    assert.equal(counted?.state, 'online');
    assert.equal(counted?.desiredProcesses, 4);
    assert.deepEqual(counted?.orders, { stopped: [3], restarts: { 1: 1 } });
    assert.equal(await store.agents.setDesired('missing', { desiredProcesses: 1 }), null);
  });

  define(
    'agents: markLost takes stale agents and their processes to lost, once; a heartbeat brings them back',
    async ({ store }) => {
      await store.agents.register(registration({ id: 'old', at: 1_000 }));
      await store.agents.register(registration({ id: 'fresh', at: 9_000 }));
      await store.agents.heartbeat('old', { facts: {}, at: 1_000, processes: [proc(0), proc(1)] });
      await store.agents.heartbeat('fresh', { facts: {}, at: 9_000, processes: [proc(0)] });
      assert.deepEqual(await store.agents.markLost(5_000), ['old']);
      assert.deepEqual(await store.agents.markLost(5_000), []);
      assert.equal((await store.agents.get('old'))?.state, 'lost');
      assert.equal((await store.agents.get('fresh'))?.state, 'online');
      assert.deepEqual(
        (await store.agents.processes('old')).map((p) => p.state),
        ['lost', 'lost'],
      );
      assert.deepEqual(
        (await store.agents.processesIn('lost')).map((p) => [p.agentId, p.slot]),
        [
          ['old', 0],
          ['old', 1],
        ],
      );
      assert.equal((await store.agents.processes('fresh'))[0]?.state, 'running');
      const back = await store.agents.heartbeat('old', { facts: {}, at: 10_000, processes: [proc(0)] });
      assert.equal(back?.state, 'online');
      assert.equal(await store.agents.markStopped('fresh', 11_000), true);
      assert.equal((await store.agents.get('fresh'))?.state, 'stopped');
      assert.equal((await store.agents.processes('fresh'))[0]?.state, 'stopped');
      assert.deepEqual(await store.agents.markLost(100_000), ['old'], 'a stopped agent is not lost');
      assert.equal(await store.agents.markStopped('missing', 1), false);
    },
  );

  define(
    'agents: forget removes a lost or stopped agent and its processes, never a live one',
    async ({ store }) => {
      await store.agents.register(registration({ id: 'live', at: 9_000 }));
      await store.agents.register(registration({ id: 'gone', at: 1_000 }));
      await store.agents.register(registration({ id: 'done', at: 9_000 }));
      for (const id of ['live', 'gone', 'done'])
        await store.agents.heartbeat(id, {
          facts: {},
          at: id === 'gone' ? 1_000 : 9_000,
          processes: [proc(0)],
        });
      assert.deepEqual(await store.agents.markLost(5_000), ['gone']);
      assert.equal(await store.agents.markStopped('done', 9_500), true);
      assert.equal(await store.agents.forget('live'), false);
      assert.equal((await store.agents.get('live'))?.state, 'online');
      assert.equal(await store.agents.forget('gone'), true);
      assert.equal(await store.agents.forget('done'), true);
      assert.equal(await store.agents.forget('gone'), false);
      assert.equal(await store.agents.forget('missing'), false);
      assert.equal(await store.agents.get('gone'), null);
      assert.deepEqual(await store.agents.processes('done'), []);
      assert.deepEqual(
        (await store.agents.processesIn('running')).map((p) => p.agentId),
        ['live'],
      );
    },
  );

  define('agents: listed oldest registration first, paged', async ({ store }) => {
    for (let i = 0; i < 5; i += 1) await store.agents.register(registration({ id: `a${i}`, at: 10 - i }));
    const { pages, items } = await allPages((after) => store.agents.list({ limit: 2, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      items.map((a) => a.id),
      ['a4', 'a3', 'a2', 'a1', 'a0'],
    );
  });
}
