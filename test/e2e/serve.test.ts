import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { freePort } from '../helpers/ports.js';
import { descendants } from '../helpers/process-tree.js';
import { countByUrl, readRecords, recordTags } from '../helpers/records.js';
import {
  killTree,
  masterApi,
  printedAdminToken,
  startServe,
  stopServe,
  type ServeRun,
} from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 600;

interface RunBody {
  id: string;
  state: string;
  waiting: string | null;
  counters: { done: number; failed: number; queued: number; inFlight: number };
}

/** Records of one run (the file sink of serve keeps them in <dataDir>/crawl-output). */
function runRecords(dataDir: string, runId: string) {
  try {
    return readRecords(join(dataDir, 'crawl-output')).filter((r) => recordTags(r).runId === runId);
  } catch {
    return [];
  }
}

/** Tasks of one run in serve's SQLite frontier (read beside the running scheduler). */
function frontierTasks(dataDir: string, runId: string): number {
  const db = new Database(join(dataDir, 'crawl-output', 'frontier.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM tasks WHERE run_id = ?').get(runId) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('ackcrawl serve', () => {
  let site: GeneratedSite;
  const dirs: string[] = [];
  const runs: ServeRun[] = [];

  before(async () => {
    site = await startGeneratedSite({ pages: PAGES, linksPerPage: 8, pageBytes: 2_000, responseDelayMs: 20 });
  });
  after(async () => {
    await site.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const run of runs.splice(0)) await killTree(run);
  });

  async function serveIn(dataDir: string, env: NodeJS.ProcessEnv) {
    const run = startServe(dataDir, env);
    runs.push(run);
    const url = await Promise.race([
      run.masterUrl,
      run.exited.then((exit) => {
        throw new Error(`serve exited (${exit.code ?? exit.signal}): ${run.stderr()}`);
      }),
    ]);
    return { run, url };
  }

  async function ports(): Promise<NodeJS.ProcessEnv> {
    return {
      ACKCRAWL_MASTER_PORT: String(await freePort()),
      ACKCRAWL_LISTEN_PORT: String(await freePort()),
      ACKCRAWL_PROCESSES: '2',
    };
  }

  const jobBody = (name: string) => ({
    name,
    seeds: [site.url],
    allowPrivate: true,
    hostDelayMs: 0,
    hostConcurrency: 8,
  });

  test('a run made over HTTP with the printed token succeeds, its records tagged with its job and run', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-serve-'));
    dirs.push(dataDir);
    const { run, url } = await serveIn(dataDir, await ports());
    await waitFor(() => printedAdminToken(run.stdout()) !== null, { message: 'admin token printed' });
    const token = printedAdminToken(run.stdout()) as string;
    const api = masterApi(url, token);
    const job = await api<{ id: string }>('POST', '/jobs', jobBody('serve site'));
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const created = await api<RunBody>('POST', `/jobs/${job.body.id}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = created.body.id;
    let last: RunBody | null = null;
    await waitFor(
      async () => {
        last = (await api<RunBody>('GET', `/runs/${runId}`)).body;
        return last.state === 'succeeded';
      },
      { timeoutMs: 90_000, intervalMs: 250, message: `run succeeded (${JSON.stringify(last)})` },
    );
    const done = (await api<RunBody>('GET', `/runs/${runId}`)).body;
    assert.equal(done.counters.done, PAGES);
    // serve's agent registered with serve's master: the fleet shows it, with its crawlers' work.
    type Fleet = {
      items: { id: string; state: string; processes: { state: string; pagesDone: number }[] }[];
    };
    await waitFor(
      async () => {
        const fleet = (await api<Fleet>('GET', '/agents')).body;
        const mine = fleet.items.find((a) => a.id.startsWith('serve-'));
        return (
          mine?.state === 'online' &&
          mine.processes.length >= 1 &&
          mine.processes.every((p) => p.state === 'running') &&
          mine.processes.reduce((n, p) => n + p.pagesDone, 0) >= PAGES
        );
      },
      {
        timeoutMs: 15_000,
        intervalMs: 250,
        message: `serve's agent in the fleet (${run.stderr().slice(-2_000)})`,
      },
    );
    assert.equal(done.counters.failed, 0);
    const records = runRecords(dataDir, runId);
    assert.equal(countByUrl(records).size, PAGES, 'every page recorded');
    assert.ok(
      records.every((r) => recordTags(r).jobId === job.body.id && recordTags(r).runId === runId),
      'records tagged',
    );
    // Its end in SQL, the run leaves the scheduler's frontier: its tasks are deleted.
    await waitFor(() => frontierTasks(dataDir, runId) === 0, {
      timeoutMs: 15_000,
      message: `the ended run's tasks deleted from frontier.sqlite (${frontierTasks(dataDir, runId)} left)`,
    });

    // The same folder again: the token is not printed a second time.
    await stopServe(run);
    runs.splice(runs.indexOf(run), 1);
    const again = await serveIn(dataDir, await ports());
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(printedAdminToken(again.run.stdout()), null, 'the admin token is printed once');
    const still = await masterApi(again.url, token)<RunBody>('GET', `/runs/${runId}`);
    assert.equal(still.body.state, 'succeeded');
  });

  test('kill -9 of the whole serve tree mid-run: serve again, the run finishes with every page', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-serve-kill-'));
    dirs.push(dataDir);
    const env = { ...(await ports()), ACKCRAWL_ADMIN_TOKEN: `admin-${'x'.repeat(24)}` };
    const first = await serveIn(dataDir, env);
    const api = masterApi(first.url, env.ACKCRAWL_ADMIN_TOKEN);
    const job = await api<{ id: string }>('POST', '/jobs', { ...jobBody('kill site'), hostConcurrency: 2 });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const runId = (await api<RunBody>('POST', `/jobs/${job.body.id}/runs`)).body.id;
    await waitFor(() => runRecords(dataDir, runId).length >= 100, {
      timeoutMs: 60_000,
      message: '100 pages recorded',
    });
    await killTree(first.run);
    runs.splice(runs.indexOf(first.run), 1);
    const before = countByUrl(runRecords(dataDir, runId)).size;
    assert.ok(before < PAGES, `killed mid-run (${before} pages recorded)`);

    const second = await serveIn(dataDir, env);
    const api2 = masterApi(second.url, env.ACKCRAWL_ADMIN_TOKEN);
    await waitFor(async () => (await api2<RunBody>('GET', `/runs/${runId}`)).body.state === 'succeeded', {
      timeoutMs: 120_000,
      intervalMs: 250,
      message: 'run succeeded after the restart',
    });
    const records = runRecords(dataDir, runId);
    const counts = countByUrl(records);
    const duplicates = records.length - counts.size;
    t.diagnostic(
      `pages ${counts.size}, records ${records.length}, duplicates ${duplicates} (after the kill at ${before})`,
    );
    assert.equal(counts.size, PAGES, '0 pages lost');
    assert.ok(duplicates <= 40, `duplicates stay rare: ${duplicates}`);
    const done = (await api2<RunBody>('GET', `/runs/${runId}`)).body;
    assert.equal(done.counters.done, PAGES);
  });

  test('a run is never shown running while its scheduler is dead', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-serve-sched-'));
    dirs.push(dataDir);
    // The scheduler comes back 10 s after it died: long enough to see the run leave `running`.
    const env = {
      ...(await ports()),
      ACKCRAWL_ADMIN_TOKEN: `admin-${'y'.repeat(24)}`,
      ACKCRAWL_SERVE_RESTART_DELAY_MS: '10000',
    };
    const { run, url } = await serveIn(dataDir, env);
    const api = masterApi(url, env.ACKCRAWL_ADMIN_TOKEN);
    const job = await api<{ id: string }>('POST', '/jobs', {
      ...jobBody('dead scheduler'),
      hostConcurrency: 1,
    });
    const runId = (await api<RunBody>('POST', `/jobs/${job.body.id}/runs`)).body.id;
    await waitFor(async () => (await api<RunBody>('GET', `/runs/${runId}`)).body.state === 'running', {
      timeoutMs: 30_000,
      message: 'run running',
    });
    const scheduler = descendants(run.child.pid as number).find((p) =>
      p.cmdline.includes('scheduler/main.js'),
    );
    assert.ok(scheduler, 'the scheduler child');
    process.kill(scheduler.pid, 'SIGKILL');
    const killedAt = Date.now();
    // Heartbeats every second, stale after three: shown waiting within 3 s and a poll.
    await waitFor(async () => (await api<RunBody>('GET', `/runs/${runId}`)).body.state !== 'running', {
      timeoutMs: 6_000,
      intervalMs: 100,
      message: 'the run left `running` after its scheduler died',
    });
    const shown = (await api<RunBody>('GET', `/runs/${runId}`)).body;
    assert.equal(shown.state, 'queued');
    assert.match(shown.waiting ?? '', /scheduler/);
    assert.ok(Date.now() - killedAt < 9_000, 'before the scheduler came back');
    // Once serve has started the scheduler again, it takes the run up and finishes it.
    await waitFor(async () => (await api<RunBody>('GET', `/runs/${runId}`)).body.state === 'succeeded', {
      timeoutMs: 120_000,
      intervalMs: 250,
      message: async () =>
        `run succeeded after the scheduler came back: ${JSON.stringify((await api<RunBody>('GET', `/runs/${runId}`)).body)}\n${run.stderr().slice(-6_000)}`,
    });
    assert.equal(countByUrl(runRecords(dataDir, runId)).size, PAGES);
  });
});
