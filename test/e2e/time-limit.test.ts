import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startGeneratedSite, type GeneratedSite } from '../../scripts/site/generated-site.js';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { countByUrl, readRecords, recordTags } from '../helpers/records.js';
import { killTree, servedMaster, startServe, type ServeRun } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';

const PAGES = 300;

describe('maxDurationMs: a crawl ends at its time limit, and loses nothing', () => {
  let site: GeneratedSite;
  const dirs: string[] = [];
  const serves: ServeRun[] = [];
  const tmp = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    // Slow enough that no run below can finish within its limit: 300 pages at 2 at a time, 40 ms each.
    site = await startGeneratedSite({ pages: PAGES, linksPerPage: 8, pageBytes: 1_000, responseDelayMs: 40 });
  });
  after(async () => {
    await site.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const run of serves.splice(0)) await killTree(run);
  });

  test('ackcrawl crawl --max-duration stops, keeps what is left, and the same command finishes it', async () => {
    const out = tmp('ackcrawl-limit-');
    const args = ['crawl', site.url, '--out', out, '--allow-private', '--host-delay', '0', '--json'];
    const started = Date.now();
    const first = await runCli([...args, '--host-concurrency', '2', '--max-duration', '2500']);
    const tookMs = Date.now() - started;
    assert.equal(first.code, 0, first.stderr);
    const stopped = JSON.parse(first.stdout) as {
      stoppedBy: string;
      timeLimitMs: number;
      pages: number;
      ok: number;
      left: number;
    };
    assert.equal(stopped.stoppedBy, 'time limit');
    assert.equal(stopped.timeLimitMs, 2_500);
    assert.ok(stopped.pages > 0 && stopped.left > 0, JSON.stringify(stopped));
    assert.ok(tookMs >= 2_500 && tookMs < 20_000, `the command took ${tookMs} ms`);
    // What it says it crawled is what it recorded: the fetches in flight at the limit finished.
    const firstRecords = readRecords(out);
    assert.equal(countByUrl(firstRecords).size, stopped.pages);
    assert.equal(firstRecords.length, stopped.pages);

    const second = await runCli([...args, '--host-concurrency', '8']);
    assert.equal(second.code, 0, second.stderr);
    const done = JSON.parse(second.stdout) as { pages: number; ok: number; settledThisRun: number };
    assert.equal(done.pages, PAGES);
    assert.equal(done.ok, PAGES);
    assert.equal(done.settledThisRun, PAGES - stopped.pages);
    const records = readRecords(out);
    assert.equal(countByUrl(records).size, PAGES, 'every page recorded');
    assert.equal(records.length, PAGES, 'none twice');
  });

  test("a master's run is cancelled at its limit, its reason recorded, its queued URLs dropped", async () => {
    const dataDir = tmp('ackcrawl-limit-serve-');
    const run = startServe(dataDir, {
      ACKCRAWL_MASTER_PORT: String(await freePort()),
      ACKCRAWL_LISTEN_PORT: String(await freePort()),
      ACKCRAWL_PROCESSES: '1',
    });
    serves.push(run);
    const { api } = await servedMaster(run);
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'timed',
      seeds: [site.url],
      allowPrivate: true,
      hostDelayMs: 100,
      hostConcurrency: 1,
      maxDurationMs: 2_000,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const created = await api<{ id: string }>('POST', `/jobs/${job.body.id}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    interface RunBody {
      state: string;
      startedAt: string | null;
      endedAt: string | null;
      endsBy: string | null;
      error: string | null;
      counters: { done: number };
    }
    let last: RunBody | null = null;
    const shownRunning: RunBody[] = [];
    await waitFor(
      async () => {
        last = (await api<RunBody>('GET', `/runs/${created.body.id}`)).body;
        if (last.state === 'running') shownRunning.push(last);
        return last.state === 'cancelled';
      },
      { timeoutMs: 30_000, intervalMs: 200, message: `run cancelled (${JSON.stringify(last)})` },
    );
    const ended = last as unknown as RunBody;
    // While it ran, the run said when its limit would end it; once ended, it says no more.
    assert.ok(shownRunning.length > 0, 'the run was seen running');
    for (const view of shownRunning) {
      assert.equal(Date.parse(view.endsBy ?? '') - Date.parse(view.startedAt ?? ''), 2_000);
    }
    assert.equal(ended.endsBy, null);
    assert.match(ended.error ?? '', /^time limit: maxDurationMs 2000 reached \(\d+ s since it started\)$/);
    const ranMs = Date.parse(ended.endedAt ?? '') - Date.parse(ended.startedAt ?? '');
    assert.ok(ranMs >= 2_000 && ranMs < 8_000, `ended ${ranMs} ms after it started`);
    assert.ok(ended.counters.done < PAGES, `${ended.counters.done} pages done`);
    // The scheduler dropped what the run had queued: its tasks leave the frontier.
    const tasks = (): number => {
      const db = new Database(join(dataDir, 'crawl-output', 'frontier.sqlite'), { readonly: true });
      try {
        const row = db.prepare('SELECT COUNT(*) AS n FROM tasks WHERE run_id = ?').get(created.body.id);
        return (row as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await waitFor(() => tasks() === 0, { timeoutMs: 15_000, message: 'the run left the frontier' });
    // What the run fetched before its end is recorded once each.
    const records = readRecords(join(dataDir, 'crawl-output')).filter(
      (r) => recordTags(r).runId === created.body.id,
    );
    assert.ok(records.length > 0 && records.length < PAGES, `${records.length} records`);
    assert.equal(countByUrl(records).size, records.length, 'none twice');
  });
});
