import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { storedPageRecordSchema, type StoredPageRecord } from '../../shared/protocol/page-record.js';
import { startConditionalSite, type ConditionalSite } from '../helpers/conditional-site.js';
import { deleteTopic, tailTopic, type TopicTail } from '../helpers/kafka-topic.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { TestRole } from '../helpers/role-process.js';
import { masterApi } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';
import { controlPlaneEnv, startMasterRole } from '../helpers/control-plane-env.js';

/** `/a/deep` is reachable only through `/` and `/a`: the recrawl must follow their last links. */
const PAGES: Record<string, string[]> = {
  '/': ['/a', '/b', '/c', '/d'],
  '/a': ['/a/deep'],
  '/a/deep': [],
  '/b': [],
  '/c': [],
  '/d': [],
};
const PATHS = Object.keys(PAGES);

interface RunBody {
  id: string;
  state: string;
  counters: { done: number; failed: number; notModified: number; queued: number; inFlight: number };
}

/**
 * A recrawl on the distributed path: master, scheduler and agent (real crawler processes) over
 * RabbitMQ, Kafka and PostgreSQL; two runs of one job through the master's API.
 */
describe('recrawl through the master: RabbitMQ, Kafka, PostgreSQL', () => {
  let site: ConditionalSite;
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let master: TestRole;
  let scheduler: TestRole;
  let agent: TestRole;
  let api: ReturnType<typeof masterApi>;
  let topic: string;
  let tail: TopicTail | undefined;

  before(async () => {
    site = await startConditionalSite(PAGES);
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-recrawl-cluster-'));
    const plane = await controlPlaneEnv(db.url, dir);
    const env = plane.env;
    topic = plane.topic;
    ({ master, api } = await startMasterRole(plane));
    scheduler = new TestRole('scheduler', env).start();
    agent = new TestRole('agent', env).start();
    tail = await tailTopic(topic);
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await scheduler?.stop('SIGTERM');
    await master?.stop('SIGTERM');
    await tail?.close();
    if (topic) await deleteTopic(topic).catch(() => undefined);
    await site?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const records = (runId: string): StoredPageRecord[] =>
    (tail?.records ?? [])
      .map((r) => storedPageRecordSchema.parse(JSON.parse(r.value.toString('utf8'))))
      .filter((r) => r.runId === runId);
  const byPath = (runId: string) => new Map(records(runId).map((r) => [new URL(r.url).pathname, r]));
  const run = async (runId: string): Promise<RunBody> => (await api<RunBody>('GET', `/runs/${runId}`)).body;
  const runToEnd = async (jobId: string): Promise<string> => {
    const created = await api<RunBody>('POST', `/jobs/${jobId}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = created.body.id;
    await waitFor(async () => (await run(runId)).state === 'succeeded', {
      timeoutMs: 90_000,
      intervalMs: 500,
      message: `run ${runId} succeeded (${scheduler.stderr.slice(-2_000)})`,
    });
    await waitFor(() => byPath(runId).size === PATHS.length, {
      timeoutMs: 30_000,
      message: `run ${runId}: a record per page in Kafka`,
    });
    return runId;
  };

  test('the second run sends the first run’s validators; unchanged pages are not-modified, counted, and none is lost', async () => {
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'recrawl',
      seeds: [site.url],
      allowPrivate: true,
      hostConcurrency: 2,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));

    const first = await runToEnd(job.body.id);
    const firstRequests = site.requests.length;
    assert.equal(site.count({ conditional: true }), 0, 'a first run has nothing to be conditional on');
    const firstPages = byPath(first);
    assert.ok([...firstPages.values()].every((r) => r.outcome === 'ok' && r.body !== null));

    site.change('/b');
    const second = await runToEnd(job.body.id);
    const asked = site.requests.slice(firstRequests);
    for (const path of PATHS) {
      const mine = asked.filter((r) => r.path === path);
      assert.ok(mine.length >= 1, `${path} requested`);
      assert.ok(
        mine.every((r) => r.ifNoneMatch === firstPages.get(path)?.headers['etag']),
        `${path}: If-None-Match from the first run's capture`,
      );
    }
    const secondPages = byPath(second);
    for (const path of PATHS.filter((p) => p !== '/b')) {
      const r = secondPages.get(path);
      assert.equal(r?.outcome, 'not-modified', path);
      assert.equal(r?.body, null);
      assert.equal(r?.previousCaptureId, firstPages.get(path)?.captureId);
    }
    assert.equal(secondPages.get('/b')?.outcome, 'ok');
    assert.ok(secondPages.get('/b')?.body?.includes('/b v2'));

    await waitFor(async () => (await run(second)).counters.notModified === PATHS.length - 1, {
      timeoutMs: 15_000,
      message: 'the run counts its not-modified pages in SQL',
    });
    const { counters } = await run(second);
    assert.equal(counters.done, PATHS.length);
    assert.equal(counters.failed, 0);
    assert.equal((await run(first)).counters.notModified, 0);
  });
});
