import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CrashHistory } from '../../shared/processes/crash-history.js';
import { shownAgentState, shownProcessState } from '../../master/fleet/fleet-view.js';
import type { AgentRow, ProcessRow } from '../../shared/ports/sql-store.js';

const agent = (fields: Partial<AgentRow>): AgentRow => ({
  id: 'a',
  name: 'a',
  hostname: 'h',
  url: 'http://127.0.0.1:8800',
  state: 'online',
  facts: {},
  lastHeartbeatAt: 1_000,
  registeredAt: 0,
  desiredProcesses: 2,
  drain: false,
  orders: { stopped: [], restarts: {} },
  ...fields,
});

describe('fleet states', () => {
  it('an agent is shown lost once its heartbeat is older than the bound, whatever the row says', () => {
    assert.equal(shownAgentState(agent({}), 11_000, 10_000), 'online');
    assert.equal(shownAgentState(agent({}), 11_001, 10_000), 'lost');
    assert.equal(shownAgentState(agent({ state: 'draining' }), 11_001, 10_000), 'lost');
    assert.equal(shownAgentState(agent({ state: 'draining' }), 5_000, 10_000), 'draining');
    // A clean goodbye stays stopped, however old.
    assert.equal(shownAgentState(agent({ state: 'stopped' }), 99_000, 10_000), 'stopped');
  });

  it('a process is never shown running on a lost or stopped agent', () => {
    const p = { state: 'running' } as ProcessRow;
    assert.equal(shownProcessState(p, 'lost'), 'lost');
    assert.equal(shownProcessState(p, 'stopped'), 'stopped');
    assert.equal(shownProcessState(p, 'online'), 'running');
    assert.equal(shownProcessState({ state: 'crash-loop' } as ProcessRow, 'draining'), 'crash-loop');
  });

  it('a crash loop is `limit` crashes within the window; older ones fall out', () => {
    const h = new CrashHistory(5, 60_000);
    for (const at of [0, 10_000, 20_000, 30_000]) h.add(at);
    assert.equal(h.looping(30_000), false);
    assert.equal(h.add(40_000), 5);
    assert.equal(h.looping(40_000), true);
    // A minute after the first, only four are recent.
    assert.equal(h.looping(60_001), false);
    h.clear();
    assert.equal(h.add(70_000), 1);
  });
});
