import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fleetFacts } from '../../master/alerts/fleet-facts.js';
import type { ProcessReport } from '../../shared/protocol/agent.js';
import { processReport, TEST_HOST_FACTS } from '../helpers/agent-reports.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';
import { AGENT_LOST_AFTER_MS, startTestMaster, sweepLost, type TestMaster } from '../helpers/master-api.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const facts = TEST_HOST_FACTS;
const proc = (slot: number, state: ProcessReport['state']): ProcessReport =>
  processReport(slot, { state, startedAt: Date.now() - 60_000, restarts: state === 'crash-loop' ? 5 : 0 });

/**
 * What the fleet writes to SQL (heartbeats through the agent link, the lost sweeper) is what the
 * alert engine of master/main.ts reads (fleetFacts): a crash-looping process and a lost agent each
 * become a signed webhook, and resolve when they clear.
 */
describe('fleet rows raise alerts: crash loop and lost agent, through the agent link and SQL', () => {
  let master: TestMaster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let store: SqlStore | undefined;
  const facts$ = () => {
    if (store === undefined) throw new Error('the master is not started');
    return fleetFacts(store.agents);
  };

  before(async () => {
    receiver = await startReceiver();
    master = await startTestMaster({
      startAt: Date.now(),
      alerting: {
        lostAgents: () => facts$().lostAgents(),
        crashLoops: () => facts$().crashLoops(),
        random: () => 0.5,
      },
    });
    store = master.store;
    const hook = await master.call('POST', '/api/v1/webhooks', { body: { url: receiver.url } });
    assert.equal(hook.status, 201, hook.text);
    receiver.secret = hook.json.secret;
    for (const kind of ['process.crash_loop', 'agent.lost']) {
      const rule = await master.call('POST', '/api/v1/alert-rules', {
        body: { name: kind, kind, params: {} },
      });
      assert.equal(rule.status, 201, rule.text);
    }
  });
  after(async () => {
    await master.close();
    await receiver.close();
  });

  const asAgent = (path: string, body: unknown) =>
    master.call('POST', path, { token: master.agentToken, body });
  const received = () => receiver.received.map((r) => [r.verified?.type, r.verified?.data.subject]);

  test('a process reported in crash-loop alerts once, and resolves when it runs again', async () => {
    const reg = await asAgent('/api/v1/agents/host-1/register', {
      name: 'host-1',
      hostname: 'crawl-1',
      url: 'http://127.0.0.1:9/',
      facts,
      processes: 2,
    });
    assert.equal(reg.status, 200, reg.text);
    const beat = (states: ProcessReport['state'][]) =>
      asAgent('/api/v1/agents/host-1/heartbeat', { facts, processes: states.map((s, i) => proc(i, s)) });
    assert.equal((await beat(['running', 'crash-loop'])).status, 200);
    await master.alerting.evaluateNow();
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(received(), [['process.crash_loop', 'host-1/1']]);

    master.clock.advance(1_000);
    await beat(['running', 'running']);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(received().at(-1), ['process.crash_loop.resolved', 'host-1/1']);
  });

  test('an agent whose heartbeats stop is marked lost by the sweeper and alerted; its next heartbeat resolves it', async () => {
    const before = receiver.received.length;
    master.clock.advance(AGENT_LOST_AFTER_MS + 1);
    assert.deepEqual(await sweepLost(master), ['host-1']);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(
      receiver.received.slice(before).map((r) => [r.verified?.type, r.verified?.data.subject]),
      [['agent.lost', 'host-1']],
    );

    await asAgent('/api/v1/agents/host-1/heartbeat', { facts, processes: [proc(0, 'running')] });
    master.clock.advance(1_000);
    await master.alerting.evaluateNow();
    await master.alerting.deliverNow();
    assert.deepEqual(received().at(-1), ['agent.lost.resolved', 'host-1']);
    assert.ok(
      receiver.received.every((r) => r.verified !== undefined),
      'every delivery verified',
    );
  });
});
