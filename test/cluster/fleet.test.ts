import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { deleteTopic, tailTopic, type TopicTail } from '../helpers/kafka-topic.js';
import { freePort } from '../helpers/ports.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { readProcStat } from '../../shared/os/proc-stat.js';
import { crawlerPids } from '../helpers/process-tree.js';
import { countByUrl, recordTags } from '../helpers/records.js';
import { TestRole } from '../helpers/role-process.js';
import { masterApi } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';
import { controlPlaneEnv, startMasterRole } from '../helpers/control-plane-env.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const PAGES = 400;
/** What docs/fleet.md promises: a dead agent is shown lost within this. */
const LOST_BOUND_MS = 20_000;

/** Running, or stopped by a signal; not gone and not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

interface ProcessBody {
  slot: number;
  pid: number | null;
  state: string;
  restarts: number;
  inFlight: number;
  pagesDone: number;
  rssBytes: number;
  cpuSeconds: number;
}
interface AgentBody {
  id: string;
  state: string;
  desiredProcesses: number;
  facts: { cpus?: number; diskFreeBytes?: number | null };
  processes: ProcessBody[];
}

/**
 * The fleet with real processes over HTTP: a master on PostgreSQL, a scheduler on RabbitMQ and
 * Kafka, and agents with their crawler processes, each its own process. Scaling, stop and
 * restart of one process, drain, a crash loop, and an agent killed with its crawlers mid-run.
 */
describe('fleet: agents and crawler processes through the master', () => {
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let master: TestRole;
  let scheduler: TestRole;
  const agents = new Map<string, TestRole>();
  let api: ReturnType<typeof masterApi>;
  let topic: string;
  let tail: TopicTail | undefined;
  let site: GeneratedSite | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** The verified webhooks of `type` about `subject` (an agent id, or `agent/slot` for a process). */
  const webhooks = (type: string, subject: string) =>
    receiver.received.filter((r) => r.verified?.type === type && r.verified.data.subject === subject);

  const startAgent = async (id: string, extra: NodeJS.ProcessEnv = {}): Promise<TestRole> => {
    const role = new TestRole('agent', {
      ...env,
      ACKCRAWL_AGENT_ID: id,
      ACKCRAWL_AGENT_PORT: String(await freePort()),
      ...extra,
    }).start();
    agents.set(id, role);
    return role;
  };
  const agent = async (id: string): Promise<AgentBody> => {
    const answer = await api<AgentBody>('GET', `/agents/${id}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  };
  const running = (a: AgentBody): ProcessBody[] => a.processes.filter((p) => p.state === 'running');
  const untilAgent = (id: string, what: string, ok: (a: AgentBody) => boolean, timeoutMs = 30_000) =>
    waitFor(
      async () => {
        // Not registered yet: 404, and the wait goes on.
        const answer = await api<AgentBody>('GET', `/agents/${id}`);
        return answer.status === 200 && ok(answer.body);
      },
      {
        timeoutMs,
        intervalMs: 200,
        message: `${id}: ${what} (${agents.get(id)?.stderr.slice(-2_000) ?? ''})`,
      },
    );

  before(async () => {
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-fleet-'));
    const plane = await controlPlaneEnv(db.url, dir, {
      ACKCRAWL_AGENT_TOKEN: `acka_test-${randomUUID()}`,
      ACKCRAWL_MASTER_URL: '',
      // Stops drain quickly in a test: 3 s for tasks in flight, SIGKILL 5 s after that.
      ACKCRAWL_DRAIN_TIMEOUT_MS: '3000',
      ACKCRAWL_STOP_TIMEOUT_MS: '100',
      // The alerts go to a receiver in this test, on loopback.
      ACKCRAWL_WEBHOOK_ALLOW_PRIVATE: 'true',
      ACKCRAWL_ALERT_INTERVAL_MS: '500',
      ACKCRAWL_WEBHOOK_INTERVAL_MS: '200',
    });
    env = { ...plane.env, ACKCRAWL_MASTER_URL: plane.masterUrl };
    topic = plane.topic;
    receiver = await startReceiver();
    ({ master, api } = await startMasterRole({ ...plane, env }));
    const hook = await api<{ secret: string }>('POST', '/webhooks', { url: receiver.url });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    receiver.secret = hook.body.secret;
    for (const kind of ['process.crash_loop', 'agent.lost']) {
      const rule = await api('POST', '/alert-rules', { name: kind, kind, params: {} });
      assert.equal(rule.status, 201, JSON.stringify(rule.body));
    }
    scheduler = new TestRole('scheduler', env).start();
    tail = await tailTopic(topic);
  });

  after(async () => {
    for (const role of agents.values()) await role.stop('SIGTERM');
    await scheduler?.stop('SIGTERM');
    await master?.stop('SIGTERM');
    await receiver?.close();
    await tail?.close();
    if (topic) await deleteTopic(topic).catch(() => undefined);
    await site?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('scale up and down, stop and restart one process, drain', async () => {
    const role = await startAgent('agent-scale');
    await untilAgent(
      'agent-scale',
      'two processes running',
      (a) => a.state === 'online' && running(a).length === 2,
    );
    const first = await agent('agent-scale');
    assert.ok((first.facts.cpus ?? 0) >= 1, 'host facts');
    assert.ok((first.facts.diskFreeBytes ?? 0) > 0, 'disk free of the data dir');
    await untilAgent('agent-scale', 'RSS and CPU from /proc', (a) =>
      running(a).every((p) => p.rssBytes > 10_000_000 && p.cpuSeconds > 0),
    );
    const pids = () => crawlerPids(role.pid as number).sort();
    assert.deepEqual(
      pids(),
      first.processes.map((p) => p.pid).sort(),
      'the pids shown are the real crawlers',
    );

    assert.equal((await api('PUT', '/agents/agent-scale/processes', { count: 3 })).status, 200);
    await untilAgent('agent-scale', 'three running', (a) => running(a).length === 3 && pids().length === 3);
    assert.equal((await api('PUT', '/agents/agent-scale/processes', { count: 1 })).status, 200);
    await untilAgent('agent-scale', 'one left', (a) => a.processes.length === 1 && pids().length === 1);
    assert.equal((await api('PUT', '/agents/agent-scale/processes', { count: 2 })).status, 200);
    await untilAgent('agent-scale', 'two again', (a) => running(a).length === 2 && pids().length === 2);

    // Stop slot 1: it drains and stays stopped; slot 0 runs on.
    const before = await agent('agent-scale');
    const slot0 = before.processes.find((p) => p.slot === 0)?.pid;
    const slot1 = before.processes.find((p) => p.slot === 1)?.pid as number;
    assert.equal((await api('POST', '/agents/agent-scale/processes/1/stop')).status, 200);
    await untilAgent('agent-scale', 'slot 1 stopped', (a) =>
      a.processes.some((p) => p.slot === 1 && p.state === 'stopped' && p.pid === null),
    );
    assert.equal(isAlive(slot1), false, 'its process is gone');
    assert.equal((await agent('agent-scale')).processes.find((p) => p.slot === 0)?.pid, slot0);
    // Restart slot 1 (stopped: it starts) and slot 0 (running: a new process).
    assert.equal((await api('POST', '/agents/agent-scale/processes/1/restart')).status, 200);
    assert.equal((await api('POST', '/agents/agent-scale/processes/0/restart')).status, 200);
    await untilAgent(
      'agent-scale',
      'both slots running as new processes',
      (a) =>
        running(a).length === 2 &&
        a.processes.every((p) => p.pid !== slot0 && p.pid !== slot1) &&
        pids().length === 2,
    );

    // Drain: every process stops; a count brings them back.
    const drained = await api<AgentBody>('POST', '/agents/agent-scale/drain');
    assert.equal(drained.body.state, 'draining');
    await untilAgent(
      'agent-scale',
      'drained',
      (a) => a.state === 'draining' && a.processes.every((p) => p.state === 'stopped') && pids().length === 0,
    );
    assert.equal((await api('PUT', '/agents/agent-scale/processes', { count: 2 })).status, 200);
    await untilAgent(
      'agent-scale',
      'back after the drain',
      (a) => a.state === 'online' && running(a).length === 2,
    );

    // A clean shutdown says goodbye: stopped, not lost.
    await role.stop('SIGTERM');
    await untilAgent('agent-scale', 'stopped', (a) => a.state === 'stopped', 10_000);
    agents.delete('agent-scale');
  });

  test('a crawler that exits at once is a crash loop: not restarted, shown, in SQL for the alerts', async () => {
    // ACKCRAWL_CONCURRENCY=0 is refused by the crawler's config (not the agent's): it exits at start.
    await startAgent('agent-crashing', {
      ACKCRAWL_PROCESSES: '1',
      ACKCRAWL_CONCURRENCY: '0',
      ACKCRAWL_RESTART_BACKOFF_MS: '100',
    });
    await untilAgent('agent-crashing', 'crash loop', (a) => a.processes[0]?.state === 'crash-loop');
    const shown = (await agent('agent-crashing')).processes[0];
    assert.equal(shown?.pid, null);
    const store = await openSqlStore(db.url);
    try {
      const rows = await store.agents.processesIn('crash-loop');
      assert.deepEqual(
        rows.map((r) => [r.agentId, r.slot]),
        [['agent-crashing', 0]],
      );
      assert.ok((rows[0]?.restarts ?? 0) >= 4, 'it was restarted before it was given up');
    } finally {
      await store.close();
    }
    // The alert: one signed webhook, verified by the standardwebhooks package in the receiver.
    await waitFor(() => webhooks('process.crash_loop', 'agent-crashing/0').length > 0, {
      timeoutMs: 15_000,
      message: `process.crash_loop webhook (${JSON.stringify(receiver.received.map((r) => [r.verified?.type, r.verifyError]))})`,
    });
    // It stays given up: no more restarts, and no second alert while the condition lasts.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const later = (await agent('agent-crashing')).processes[0];
    assert.equal(later?.state, 'crash-loop');
    assert.equal(later?.restarts, shown?.restarts);
    assert.equal(webhooks('process.crash_loop', 'agent-crashing/0').length, 1);
    await agents.get('agent-crashing')?.stop('SIGTERM');
    agents.delete('agent-crashing');
  });

  test('kill -9 of an agent and its crawlers mid-run: lost within 20 s, its work done by the other, nothing lost', async (t) => {
    site = await startGeneratedSite({ pages: PAGES, linksPerPage: 6, pageBytes: 1_000, seed: 7 });
    const victim = await startAgent('agent-victim');
    await startAgent('agent-survivor');
    for (const id of ['agent-victim', 'agent-survivor']) {
      await untilAgent(id, 'two running', (a) => running(a).length === 2);
    }
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: `fleet-${randomUUID()}`,
      seeds: [site.url],
      allowPrivate: true,
      hostConcurrency: 4,
      hostDelayMs: 40,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const run = await api<{ id: string }>('POST', `/jobs/${job.body.id}/runs`);
    assert.equal(run.status, 201, JSON.stringify(run.body));
    const records = (): PageRecord[] =>
      (tail?.records ?? [])
        .map((r) => JSON.parse(r.value.toString('utf8')) as PageRecord)
        .filter((r) => recordTags(r).runId === run.body.id);
    await untilAgent('agent-victim', 'the victim working', (a) => a.processes.some((p) => p.pagesDone > 5));

    // The agent, and its crawlers, die at once: no goodbye, no drain.
    const crawlers = crawlerPids(victim.pid as number);
    assert.equal(crawlers.length, 2);
    const killedAt = Date.now();
    process.kill(victim.pid as number, 'SIGKILL');
    for (const pid of crawlers) process.kill(pid, 'SIGKILL');
    await untilAgent(
      'agent-victim',
      'lost, with its processes',
      (a) => a.state === 'lost' && a.processes.every((p) => p.state === 'lost'),
      LOST_BOUND_MS,
    );
    const lostAfterMs = Date.now() - killedAt;
    t.diagnostic(`agent shown lost ${lostAfterMs} ms after kill -9`);
    assert.ok(lostAfterMs <= LOST_BOUND_MS);
    // The sweeper writes it into SQL (for the alert engine) within its pass, inside the same bound.
    const store = await openSqlStore(db.url);
    try {
      await waitFor(
        async () =>
          (await store.agents.get('agent-victim'))?.state === 'lost' &&
          (await store.agents.processes('agent-victim')).every((p) => p.state === 'lost'),
        { timeoutMs: Math.max(0, killedAt + LOST_BOUND_MS - Date.now()), message: 'lost in SQL within 20 s' },
      );
      t.diagnostic(`lost in SQL ${Date.now() - killedAt} ms after kill -9`);
    } finally {
      await store.close();
    }

    // The run completes on the survivor: every page, none lost.
    await waitFor(
      async () => (await api<{ state: string }>('GET', `/runs/${run.body.id}`)).body.state === 'succeeded',
      { timeoutMs: 120_000, intervalMs: 500, message: `run succeeded (${scheduler.stderr.slice(-2_000)})` },
    );
    const mine = records();
    const counts = countByUrl(mine);
    t.diagnostic(`${counts.size} pages, ${mine.length - counts.size} duplicates`);
    assert.equal(counts.size, PAGES, 'every page, none lost');
    const survivor = await agent('agent-survivor');
    assert.equal(survivor.state, 'online');
    assert.ok(survivor.processes.reduce((n, p) => n + p.pagesDone, 0) > 0, 'the survivor did work');

    // The alert went out as a signed webhook while it was lost.
    await waitFor(() => webhooks('agent.lost', 'agent-victim').length === 1, {
      timeoutMs: 15_000,
      message: 'agent.lost webhook',
    });

    // The victim comes back under the same id: online again, with the count the master keeps,
    // and the alert resolves.
    await startAgent('agent-victim');
    await untilAgent('agent-victim', 'back online', (a) => a.state === 'online' && running(a).length === 2);
    await waitFor(() => webhooks('agent.lost.resolved', 'agent-victim').length === 1, {
      timeoutMs: 15_000,
      message: 'agent.lost.resolved webhook',
    });
    assert.equal(webhooks('agent.lost', 'agent-victim').length, 1, 'one alert while it lasted');
  });

  test('an agent restarted after kill -9 stops the crawlers of its previous life (by pid)', async () => {
    const role = await startAgent('agent-orphans');
    await untilAgent('agent-orphans', 'two running', (a) => running(a).length === 2);
    const old = crawlerPids(role.pid as number);
    assert.equal(old.length, 2);
    // Crawlers parse hostile pages: they hold the scheduler's token, never the fleet's or an admin's.
    for (const pid of old) {
      const names = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .map((kv) => kv.split('=')[0]);
      assert.ok(names.includes('ACKCRAWL_TOKEN'));
      assert.ok(
        !names.includes('ACKCRAWL_AGENT_TOKEN') && !names.includes('ACKCRAWL_ADMIN_TOKEN'),
        names.join(' '),
      );
    }
    // Frozen crawlers cannot notice their agent is gone: orphans for the next agent to find.
    for (const pid of old) process.kill(pid, 'SIGSTOP');
    await role.stop('SIGKILL');
    assert.ok(old.every(isAlive), 'the orphans are still there');
    const next = await startAgent('agent-orphans');
    await waitFor(() => old.every((pid) => !isAlive(pid)), {
      timeoutMs: 15_000,
      message: `orphans cleaned (${next.stderr.slice(-2_000)})`,
    });
    await untilAgent(
      'agent-orphans',
      'reconciled: two new processes',
      (a) =>
        a.state === 'online' &&
        running(a).length === 2 &&
        a.processes.every((p) => !old.includes(p.pid ?? -1)),
    );
  });
});
