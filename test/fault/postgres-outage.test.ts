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
import { serviceControl } from '../helpers/service-control.js';
import { startDeployment, type Deployment } from '../helpers/deployment.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * At about 50 pages a second the run lasts some 24 s, long enough to go on through the server's
 * stop (2.5 s here, longer on a loaded machine) and the outage. With 600 pages, some 12 s, a stop
 * that took the rest of the run would leave the outage nothing to record; CI83 once saw "0 pages
 * recorded" without saying why, so the test now also says how long the stop took.
 */
const PAGES = 1_200;
const OUTAGE_MS = 10_000;

interface RunBody {
  id: string;
  state: string;
  counters: { done: number; failed: number };
}

/**
 * The SQL store is the control plane's memory, not the crawl's: with PostgreSQL down mid-run, the
 * crawl goes on (URLs in RabbitMQ, records in Kafka), the master answers 503 instead of dying, and
 * once the server is back the run's counters and its end reach SQL by themselves.
 */
describe('PostgreSQL down during a run (master, scheduler, agent on RabbitMQ, Kafka, PostgreSQL)', () => {
  let site: GeneratedSite;
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let master: TestRole;
  let scheduler: TestRole;
  let agent: TestRole;
  let api: ReturnType<typeof masterApi>;
  let deployment: Deployment | undefined;

  before(async () => {
    site = await startGeneratedSite({ pages: PAGES, linksPerPage: 6, pageBytes: 1_000 });
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-postgres-outage-'));
    const plane = await controlPlaneEnv(db.url, dir, { ACKCRAWL_CONCURRENCY: '8' });
    deployment = await startDeployment(plane);
    ({ master, scheduler, agent, api } = deployment);
  });
  after(async () => {
    // Never leave the shared server down for the tests after this one.
    await serviceControl('up', 'postgres');
    await deployment?.stop();
    await site?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const records = (runId: string): PageRecord[] => deployment?.records(runId) ?? [];

  test('the crawl goes on, the master answers 503, and the run ends recorded once SQL is back', async () => {
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'postgres outage',
      seeds: [site.url],
      allowPrivate: true,
      // About 50 pages a second: the run outlasts the outage's start.
      hostConcurrency: 1,
      hostDelayMs: 20,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const runId = (await api<RunBody>('POST', `/jobs/${job.body.id}/runs`)).body.id;
    await waitFor(() => records(runId).length >= 50, {
      timeoutMs: 60_000,
      message: () => `the run under way (scheduler: ${scheduler.stderr.slice(-2_000)})`,
    });

    const stopping = Date.now();
    const beforeStop = records(runId).length;
    await serviceControl('down', 'postgres');
    const downAt = Date.now();
    let answered: { status: number; body: unknown } | null = null;
    try {
      const atStop = records(runId).length;
      answered = await api<RunBody>('GET', `/runs/${runId}`);
      await waitFor(() => Date.now() - downAt >= OUTAGE_MS, { timeoutMs: OUTAGE_MS + 5_000 });
      const during = records(runId).length - atStop;
      const stopped = `${beforeStop} pages recorded when the stop began, ${atStop} once it took ${downAt - stopping} ms`;
      console.log(
        `# postgres outage: ${during} pages recorded in the ${OUTAGE_MS / 1000} s without SQL (${stopped})`,
      );
      assert.ok(
        during >= 50,
        `the crawl went on without SQL (${during} pages; ${stopped}); the scheduler's log: ${scheduler.stderr.slice(-3_000)}`,
      );
      for (const role of [master, scheduler, agent]) {
        assert.ok(role.running, `the ${role.name} is still running: ${role.stderr.slice(-1_500)}`);
      }
    } finally {
      await serviceControl('up', 'postgres');
    }
    assert.equal(answered?.status, 503, `the master answers 503 meanwhile: ${JSON.stringify(answered)}`);
    assert.match(JSON.stringify(answered?.body), /SQL_UNAVAILABLE/);

    const upAt = Date.now();
    let last: RunBody | null = null;
    await waitFor(
      async () => {
        const got = await api<RunBody>('GET', `/runs/${runId}`).catch(() => null);
        last = got?.status === 200 ? got.body : last;
        return last?.state === 'succeeded';
      },
      { timeoutMs: 60_000, message: () => `run succeeded (${JSON.stringify(last)})` },
    );
    const done = (last as RunBody | null)?.counters;
    assert.deepEqual([done?.done, done?.failed], [PAGES, 0], 'its counters in SQL');
    await waitFor(() => new Set(records(runId).map((r) => r.url)).size >= PAGES, {
      timeoutMs: 30_000,
      message: 'every page in Kafka',
    });
    const all = records(runId);
    const duplicates = all.length - new Set(all.map((r) => r.url)).size;
    console.log(
      `# postgres outage: run succeeded ${((Date.now() - upAt) / 1000).toFixed(1)} s after the server ` +
        `was back; ${all.length} records for ${PAGES} pages, ${duplicates} duplicates`,
    );
    assert.ok(duplicates < PAGES * 0.005, `duplicates under 0.5% (${duplicates})`);
  });
});
