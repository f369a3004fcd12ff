import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunHostsAnswer } from '../../shared/protocol/run-hosts.js';
import { freePort } from '../helpers/ports.js';
import { startRetrySite, type RetrySite } from '../helpers/retry-site.js';
import { killTree, servedMaster, startServe, type ServeRun } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';

interface Failure {
  id: string;
  url: string;
  final: boolean;
  retriedAt: string | null;
  requeuedAt: string | null;
}

describe('ackcrawl serve: a run’s hosts, and a final failure sent back', () => {
  let site: RetrySite;
  let serve: ServeRun;
  const dataDir = mkdtempSync(join(tmpdir(), 'ackcrawl-retry-'));

  before(async () => {
    site = await startRetrySite();
  });
  after(async () => {
    site.release();
    if (serve) await killTree(serve);
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('hosts show the request in flight; a retry fetches the URL once more, once', async () => {
    serve = startServe(dataDir, {
      ACKCRAWL_MASTER_PORT: String(await freePort()),
      ACKCRAWL_LISTEN_PORT: String(await freePort()),
      ACKCRAWL_PROCESSES: '1',
    });
    const { api } = await servedMaster(serve);
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'retry site',
      seeds: [site.url],
      allowPrivate: true,
      hostDelayMs: 0,
      hostConcurrency: 4,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const runId = (await api<{ id: string }>('POST', `/jobs/${job.body.id}/runs`)).body.id;
    const host = new URL(site.url).host;

    // The run's hosts: the site's, with /slow in flight and cooling down after /flaky's 429.
    let hosts: RunHostsAnswer | null = null;
    await waitFor(
      async () => {
        const got = await api<RunHostsAnswer>('GET', `/runs/${runId}/hosts?limit=5`);
        hosts = got.status === 200 ? got.body : null;
        return hosts?.items.some((h) => h.host === host && h.inFlight > 0 && h.pausedUntil !== null) ?? false;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: `a host in flight, cooling down (${JSON.stringify(hosts)})`,
      },
    );
    const busy = (hosts as RunHostsAnswer | null)?.items.find((h) => h.host === host);
    assert.equal(busy?.concurrency, 4);
    assert.match(String(busy?.pauseReason), /HTTP 429/);
    assert.ok(Date.parse(String(busy?.pausedUntil)) > Date.now(), 'a cool-down still ahead');
    assert.ok((busy?.fetched ?? 0) >= 1);

    // The failures: /missing failed for good, /flaky was retried by the run itself.
    const failures = async () =>
      (await api<{ items: Failure[] }>('GET', `/runs/${runId}/failures`)).body.items;
    let seen: Failure[] = [];
    await waitFor(
      async () => {
        seen = await failures();
        return seen.some((f) => f.final && f.url.endsWith('/missing')) && seen.some((f) => !f.final);
      },
      { timeoutMs: 30_000, intervalMs: 250, message: `failures logged (${JSON.stringify(seen)})` },
    );
    const missing = seen.find((f) => f.final && f.url.endsWith('/missing')) as Failure;
    const flaky = seen.find((f) => !f.final) as Failure;
    assert.equal(missing.retriedAt, null);
    assert.equal(site.hits.get('/missing'), 1);

    const retry = (id: string) => api('POST', `/runs/${runId}/failures/${id}/retry`);
    const first = await retry(missing.id);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.url, missing.url);
    assert.equal(first.body.failureId, missing.id);
    const second = await retry(missing.id);
    assert.equal(second.status, 202, JSON.stringify(second.body));
    assert.equal(second.body.retriedAt, first.body.retriedAt, 'the second retry changes nothing');
    const notFinal = await retry(flaky.id);
    assert.equal(notFinal.status, 409);
    assert.equal((notFinal.body.error as { code: string }).code, 'FAILURE_NOT_FINAL');
    const unknown = await retry('999999');
    assert.equal(unknown.status, 404);
    assert.equal((unknown.body.error as { code: string }).code, 'FAILURE_NOT_FOUND');

    // Fetched again (a 404 again: a second final failure), and marked queued; never a third time.
    await waitFor(
      async () => {
        seen = await failures();
        return (
          site.hits.get('/missing') === 2 &&
          seen.filter((f) => f.final && f.url.endsWith('/missing')).length === 2 &&
          seen.find((f) => f.id === missing.id)?.requeuedAt !== null
        );
      },
      { timeoutMs: 30_000, intervalMs: 250, message: `fetched again (${JSON.stringify(seen)})` },
    );
    assert.notEqual(seen.find((f) => f.id === missing.id)?.retriedAt, null);
    site.release();
    await waitFor(
      async () => (await api<{ state: string }>('GET', `/runs/${runId}`)).body.state === 'succeeded',
      { timeoutMs: 30_000, intervalMs: 250, message: 'run succeeded' },
    );
    assert.equal(site.hits.get('/missing'), 2, 'the URL was put in once');
    const ended = await retry(seen.filter((f) => f.final).at(-1)?.id ?? '');
    assert.equal(ended.status, 409);
    assert.equal((ended.body.error as { code: string }).code, 'RUN_STATE_CONFLICT');
    const none = await api<RunHostsAnswer>('GET', `/runs/${runId}/hosts`);
    assert.equal(none.status, 200);
    assert.deepEqual(none.body.items, []);
    assert.match(String(none.body.note), /succeeded/);
  });
});
