import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { controlPlaneEnv } from '../helpers/control-plane-env.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { TestRole } from '../helpers/role-process.js';
import type { masterApi } from '../helpers/serve.js';
import { rabbitDiskAlarm } from '../helpers/service-control.js';
import { startDeployment, type Deployment } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 600;

interface RunBody {
  id: string;
  state: string;
  waiting: string | null;
  counters: { done: number; failed: number };
}

/**
 * What an operator reads in the master while RabbitMQ blocks the scheduler's publishing (its disk
 * alarm): the run stays `running`, and `waiting` says why nothing moves, within seconds; once the
 * alarm clears, `waiting` goes and the run ends whole.
 */
describe('the master shows a run stalled by a RabbitMQ disk alarm (master, scheduler, agent)', () => {
  let site: GeneratedSite;
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let scheduler: TestRole;
  let api: ReturnType<typeof masterApi>;
  let deployment: Deployment | undefined;

  before(async () => {
    // Few links a page: the crawl keeps finding new URLs (publishing them) for most of its length.
    site = await startGeneratedSite({ pages: PAGES, linksPerPage: 3, pageBytes: 1_000 });
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-alarm-run-view-'));
    const plane = await controlPlaneEnv(db.url, dir, { ACKCRAWL_CONCURRENCY: '8' });
    deployment = await startDeployment(plane);
    ({ scheduler, api } = deployment);
  });
  after(async () => {
    // Never leave the shared node alarmed for the tests after this one.
    await rabbitDiskAlarm.clear();
    await deployment?.stop();
    await site?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const records = (runId: string): PageRecord[] => deployment?.records(runId) ?? [];

  test('running, with waiting naming the alarm; then the run ends whole once it clears', async () => {
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'rabbitmq alarm',
      seeds: [site.url],
      allowPrivate: true,
      // About 50 pages a second: the run outlasts the alarm's start.
      hostConcurrency: 1,
      hostDelayMs: 20,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const runId = (await api<RunBody>('POST', `/jobs/${job.body.id}/runs`)).body.id;
    await waitFor(() => records(runId).length >= 10, {
      timeoutMs: 60_000,
      message: () => `the run under way (scheduler: ${scheduler.stderr.slice(-2_000)})`,
    });

    let shown: RunBody | null = null;
    await rabbitDiskAlarm.raise();
    const alarmedAt = Date.now();
    try {
      await waitFor(
        async () => {
          const got = await api<RunBody>('GET', `/runs/${runId}`);
          shown = got.status === 200 ? got.body : shown;
          return /RabbitMQ blocks publishing/.test(shown?.waiting ?? '');
        },
        { timeoutMs: 30_000, message: () => `waiting names the alarm (${JSON.stringify(shown)})` },
      );
      const seenAfterS = (Date.now() - alarmedAt) / 1000;
      const view = shown as RunBody | null;
      assert.equal(view?.state, 'running', 'a stalled run is still running: its scheduler is alive');
      assert.match(view?.waiting ?? '', /nothing acknowledged for \d+ s$/);
      console.log(`# alarm run view: shown ${seenAfterS.toFixed(1)} s after the alarm: ${view?.waiting}`);
    } finally {
      await rabbitDiskAlarm.clear();
    }

    let last: RunBody | null = null;
    await waitFor(
      async () => {
        const got = await api<RunBody>('GET', `/runs/${runId}`);
        last = got.status === 200 ? got.body : last;
        return last?.state === 'succeeded' || (last?.state === 'running' && last.waiting === null);
      },
      { timeoutMs: 30_000, message: () => `the stall gone from the run view (${JSON.stringify(last)})` },
    );
    await waitFor(
      async () => {
        const got = await api<RunBody>('GET', `/runs/${runId}`);
        last = got.status === 200 ? got.body : last;
        return last?.state === 'succeeded';
      },
      { timeoutMs: 90_000, message: () => `run succeeded (${JSON.stringify(last)})` },
    );
    const done = (last as RunBody | null)?.counters;
    assert.deepEqual([done?.done, done?.failed], [PAGES, 0], 'its counters in SQL');
    await waitFor(() => new Set(records(runId).map((r) => r.url)).size >= PAGES, {
      timeoutMs: 30_000,
      message: 'every page in Kafka',
    });
    const all = records(runId);
    const duplicates = all.length - new Set(all.map((r) => r.url)).size;
    console.log(`# alarm run view: ${all.length} records for ${PAGES} pages, ${duplicates} duplicates`);
    assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
  });
});
