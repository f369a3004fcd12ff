import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { countByUrl, recordTags } from '../helpers/records.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { TestRole } from '../helpers/role-process.js';
import { masterApi } from '../helpers/serve.js';
import { startDeployment, type Deployment } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait-for.js';
import { controlPlaneEnv } from '../helpers/control-plane-env.js';
import { startRetrySite } from '../helpers/retry-site.js';
import { existingQueues } from '../helpers/rabbitmq.js';
import { queueNames, runQueueNames } from '../../shared/adapters/frontier/rabbitmq/topology.js';

const PAGES = 300;

interface RunBody {
  id: string;
  state: string;
  counters: { done: number; failed: number; queued: number; inFlight: number };
}

/**
 * The control plane on the distributed services: master, scheduler and agent as separate
 * processes over RabbitMQ (frontier and run commands), Kafka (the page records, read back from
 * the topic) and PostgreSQL (a scratch database). Two runs of two sites at once; pause, resume, cancel; master and scheduler
 * restarts mid-run.
 */
describe('master + scheduler + agent on RabbitMQ, Kafka and PostgreSQL', () => {
  let siteA: GeneratedSite;
  let siteB: GeneratedSite;
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let master: TestRole;
  let scheduler: TestRole;
  let api: ReturnType<typeof masterApi>;
  let deployment: Deployment | undefined;

  before(async () => {
    // 20 pages a second per site (one at a time, 50 ms apart): each run lasts about 15 s unpaused.
    siteA = await startGeneratedSite({ pages: PAGES, linksPerPage: 6, pageBytes: 1_000, seed: 1 });
    siteB = await startGeneratedSite({ pages: PAGES, linksPerPage: 6, pageBytes: 1_000, seed: 2 });
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-master-runs-'));
    const plane = await controlPlaneEnv(db.url, dir, { ACKCRAWL_CONCURRENCY: '8' });
    env = plane.env;
    deployment = await startDeployment(plane, {
      // At info: when a wait below times out, its message carries what the scheduler last did.
      ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'info',
    });
    ({ master, scheduler, api } = deployment);
  });

  after(async () => {
    await deployment?.stop();
    await siteA?.close();
    await siteB?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const records = (runId: string): PageRecord[] => deployment?.records(runId) ?? [];
  const run = async (runId: string): Promise<RunBody> => (await api<RunBody>('GET', `/runs/${runId}`)).body;
  const startRun = async (name: string, site: GeneratedSite): Promise<{ jobId: string; runId: string }> => {
    const job = await api<{ id: string }>('POST', '/jobs', {
      name,
      seeds: [site.url],
      allowPrivate: true,
      hostConcurrency: 1,
      hostDelayMs: 50,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const created = await api<RunBody>('POST', `/jobs/${job.body.id}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { jobId: job.body.id, runId: created.body.id };
  };

  // First, on fresh roles: after the restarts and the cancel below, a run's one request that
  // hangs was seen to hold back the rest of its tasks (noticed, not yet understood).
  test('a final failure retried through the API is fetched again on the RabbitMQ frontier, once', async () => {
    const site = await startRetrySite();
    try {
      const job = await api<{ id: string }>('POST', '/jobs', {
        name: 'retry on rabbitmq',
        seeds: [site.url],
        allowPrivate: true,
        hostConcurrency: 4,
        hostDelayMs: 0,
        // /slow answers when the test lets it: no timeout (and a retry 5 min later) before that.
        responseTimeoutMs: 120_000,
        totalTimeoutMs: 120_000,
        retryDelayMs: 1_000,
      });
      assert.equal(job.status, 201, JSON.stringify(job.body));
      const created = await api<RunBody>('POST', `/jobs/${job.body.id}/runs`);
      const runId = created.body.id;
      type Failure = { id: string; url: string; final: boolean; requeuedAt: string | null };
      const finalMissing = async () =>
        (await api<{ items: Failure[] }>('GET', `/runs/${runId}/failures?final=true`)).body.items.filter(
          (f) => f.url.endsWith('/missing'),
        );
      await waitFor(async () => (await finalMissing()).length === 1, {
        timeoutMs: 60_000,
        intervalMs: 250,
        message: async () =>
          `the 404 failed for good (run ${JSON.stringify((await run(runId)).counters)}; hits ${JSON.stringify([...site.hits])}; ${scheduler.stderr.slice(-2_000)})`,
      });
      const [missing] = await finalMissing();
      assert.ok(missing);
      assert.equal((await api('POST', `/runs/${runId}/failures/${missing.id}/retry`)).status, 202);
      assert.equal((await api('POST', `/runs/${runId}/failures/${missing.id}/retry`)).status, 202);
      await waitFor(
        async () =>
          site.hits.get('/missing') === 2 &&
          (await finalMissing()).length === 2 &&
          (await finalMissing()).some((f) => f.id === missing.id && f.requeuedAt !== null),
        {
          timeoutMs: 30_000,
          intervalMs: 250,
          message: `fetched again (hits ${site.hits.get('/missing')}; ${scheduler.stderr.slice(-2_000)})`,
        },
      );
      site.release();
      await waitFor(async () => (await run(runId)).state === 'succeeded', {
        timeoutMs: 60_000,
        intervalMs: 500,
        message: async () =>
          `the run succeeded (${JSON.stringify(await run(runId))}; hits ${JSON.stringify([...site.hits])})`,
      });
      assert.equal(site.hits.get('/missing'), 2, 'put back once, however many times it was asked');
      // Its end in SQL, the scheduler lets go of the run: its queues are deleted from the broker.
      const prefix = env.ACKCRAWL_QUEUE_PREFIX as string;
      const queues = runQueueNames(queueNames(prefix), runId);
      await waitFor(async () => (await existingQueues(queues)).length === 0, {
        timeoutMs: 15_000,
        message: async () =>
          `the ended run's queues deleted (left: ${(await existingQueues(queues)).join(' ')})`,
      });
    } finally {
      site.release();
      await site.close();
    }
  });

  test('two runs at once: pause one (its site is left alone), resume, restarts of master and scheduler, cancel', async (t) => {
    const a = await startRun('site a', siteA);
    const b = await startRun('site b', siteB);
    await waitFor(
      async () => (await run(a.runId)).state === 'running' && (await run(b.runId)).state === 'running',
      {
        timeoutMs: 30_000,
        message: `both runs running (${scheduler.stderr})`,
      },
    );
    await waitFor(() => records(a.runId).length >= 20, { timeoutMs: 30_000, message: 'run a under way' });

    // Pause a: after what was in flight, its site sees no request for 10 s; b goes on.
    assert.equal((await api('POST', `/runs/${a.runId}/pause`)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const aBefore = siteA.stats().requests;
    const bBefore = siteB.stats().requests;
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    assert.equal(
      siteA.stats().requests,
      aBefore,
      `no request to the paused run’s site (scheduler: ${scheduler.stderr.slice(-3_000)})`,
    );
    assert.ok(siteB.stats().requests > bBefore + 50, 'the other run went on');
    assert.equal((await run(a.runId)).state, 'paused');

    // Resume; then restart the master and kill -9 the scheduler mid-run.
    assert.equal((await api('POST', `/runs/${a.runId}/resume`)).status, 200);
    await waitFor(() => siteA.stats().requests > aBefore, { timeoutMs: 15_000, message: 'run a resumed' });
    await master.stop('SIGKILL');
    master.start();
    await waitFor(async () => (await api('GET', '/jobs').catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 30_000,
      message: 'master back',
    });
    await scheduler.stop('SIGKILL');
    scheduler.start();

    for (const { jobId, runId } of [a, b]) {
      await waitFor(async () => (await run(runId)).state === 'succeeded', {
        timeoutMs: 120_000,
        intervalMs: 500,
        message: async () =>
          `run ${runId} succeeded (${JSON.stringify(await run(runId))}; ${records(runId).length} records; scheduler: ${scheduler.stderr.slice(-8_000)})`,
      });
      const mine = records(runId);
      const counts = countByUrl(mine);
      t.diagnostic(`run ${runId}: ${counts.size} pages, ${mine.length - counts.size} duplicates`);
      assert.equal(counts.size, PAGES, 'every page, none lost');
      assert.ok(
        mine.every((r) => recordTags(r).jobId === jobId && recordTags(r).runId === runId),
        'records tagged',
      );
      assert.equal((await run(runId)).counters.done, PAGES);
    }
    const hostsOf = (runId: string) => new Set(records(runId).map((r) => new URL(r.url).port));
    assert.deepEqual([...hostsOf(a.runId)], [String(siteA.port)], 'run a has only site a');
    assert.deepEqual([...hostsOf(b.runId)], [String(siteB.port)], 'run b has only site b');

    // Cancel: a new run of b's job, cancelled mid-run, stops and stays cancelled.
    const c = await api<RunBody>('POST', `/jobs/${b.jobId}/runs`);
    await waitFor(() => records(c.body.id).length >= 10, { timeoutMs: 30_000, message: 'run c under way' });
    assert.equal((await api('POST', `/runs/${c.body.id}/cancel`)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const cBefore = siteB.stats().requests;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(siteB.stats().requests, cBefore, 'no request after the cancel');
    assert.equal((await run(c.body.id)).state, 'cancelled');
    assert.equal((await api('POST', `/runs/${c.body.id}/resume`)).status, 409);
  });
});
