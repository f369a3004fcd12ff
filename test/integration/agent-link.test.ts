import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createAgentApp } from '../../client/agent/app.js';
import { hostFacts } from '../../client/agent/host-facts.js';
import { MasterLink } from '../../client/agent/master-link.js';
import { createHostPolicy } from '../../shared/http/request-guards.js';
import { silentLogger } from '../../shared/logger.js';
import type { DesiredState, ProcessReport } from '../../shared/protocol/agent.js';
import { callServer, startTestMaster, type TestMaster } from '../helpers/master-api.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The agent's link and API against the master's API, in-process over loopback HTTP: register,
 * heartbeats answered with the desired state, the master's nudge, a master restart, goodbye.
 */
describe('agent link: an agent and the master over HTTP', () => {
  let master: TestMaster;
  before(async () => {
    master = await startTestMaster();
  });
  after(() => master.close());

  test('register, beat, take a change at once when nudged, beat on across a master restart, say goodbye', async () => {
    const seen: DesiredState[] = [];
    const processes: ProcessReport[] = [];
    let link: MasterLink | null = null;
    const app = createAgentApp({
      agentId: 'link-agent',
      token: master.agentToken,
      hosts: createHostPolicy({ listenHost: '127.0.0.1', allowedHosts: [], service: 'agent' }),
      logger: silentLogger(),
      processes: () => processes,
      desired: () => seen.at(-1) ?? null,
      sync: () => link?.sync(),
    });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    link = new MasterLink({
      masterUrl: master.url,
      token: master.agentToken,
      agentId: 'link-agent',
      // Slow beats: a change must arrive by the nudge, not by the next beat.
      heartbeatMs: 60_000,
      registration: () => ({
        name: 'link agent',
        hostname: 'localhost',
        url: `http://127.0.0.1:${port}`,
        facts: hostFacts('.'),
        processes: 2,
      }),
      heartbeat: () => ({ facts: hostFacts('.'), processes }),
      onDesired: (d) => void seen.push(d),
      logger: silentLogger(),
    });
    try {
      link.start();
      await waitFor(() => seen.length === 1, { message: 'registered' });
      assert.equal(seen[0]?.desiredProcesses, 2);
      // The master's answers set the pace it wants (2 s here), not the agent's own.
      processes.push({
        slot: 0,
        pid: process.pid,
        state: 'running',
        startedAt: master.clock.now(),
        restarts: 0,
        inFlight: 0,
        pagesDone: 0,
        errors: 0,
        rssBytes: 1,
        cpuSeconds: 0,
      });
      const changed = await master.call('PUT', '/api/v1/agents/link-agent/processes', { body: { count: 5 } });
      assert.equal(changed.status, 200, changed.text);
      await waitFor(() => seen.at(-1)?.desiredProcesses === 5, { timeoutMs: 5_000, message: 'nudged' });
      const shown = await master.call('GET', '/api/v1/agents/link-agent');
      assert.equal(shown.json.processes.length, 1, 'the heartbeat that answered carried the processes');

      // The agent's API: status and sync take the agent credential only.
      const status = await callServer(port, 'GET', '/api/v1/status', { token: master.agentToken });
      assert.equal(status.status, 200);
      assert.equal(status.json.desired.desiredProcesses, 5);
      for (const token of [null, master.adminToken, 'acka_wrong-but-long-enough']) {
        const refused = await callServer(port, 'POST', '/api/v1/sync', { token });
        assert.equal(refused.status, 401, refused.text);
        assert.equal(refused.json.error.code, 'UNAUTHORIZED');
      }
      assert.equal((await callServer(port, 'GET', '/health', { token: null })).status, 200);

      // The master restarts (its state is in SQL); the agent's next beat finds it and is online again.
      await master.restart();
      await master.store.agents.markStopped('link-agent', master.clock.now());
      link.sync();
      await waitFor(async () => (await master.store.agents.get('link-agent'))?.state === 'online', {
        timeoutMs: 5_000,
        message: 'beating again',
      });
      await link.close();
      assert.equal((await master.store.agents.get('link-agent'))?.state, 'stopped', 'goodbye');
    } finally {
      await link.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
