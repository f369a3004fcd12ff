import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/ports.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { TestRole } from '../helpers/role-process.js';
import { masterApi } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait-for.js';

interface Fire {
  fireAt: string;
  outcome: string;
  runId: string | null;
  missed: number;
  claimedBy: string;
}
interface Run {
  id: string;
  state: string;
  scheduledBy: { scheduleId: string; fireAt: string } | null;
}

const EVERY_3S = '*/3 * * * * *';

/**
 * Cron schedules with two real master processes on one PostgreSQL database: every fire time makes
 * exactly one run across both, the overlap policies hold, and a master restart after missed fire
 * times makes one run under run-once and none under skip (docs/schedules.md).
 */
describe('schedules: two masters on one PostgreSQL database', () => {
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  const masters: TestRole[] = [];
  const apis: ReturnType<typeof masterApi>[] = [];

  const start = async (i: number, envOf: (i: number) => NodeJS.ProcessEnv): Promise<void> => {
    const env = envOf(i);
    const role = new TestRole('master', env).start();
    masters[i] = role;
    const api = masterApi(`http://127.0.0.1:${env.ACKCRAWL_MASTER_PORT}`, String(env.ACKCRAWL_ADMIN_TOKEN));
    apis[i] = api;
    await waitFor(async () => (await api('GET', '/jobs').catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 30_000,
      message: `master ${i} answering (${role.stderr})`,
    });
  };
  let envOf: (i: number) => NodeJS.ProcessEnv;

  before(async () => {
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-schedules-'));
    const adminToken = `admin-${randomUUID()}`;
    const ports = [await freePort(), await freePort()];
    envOf = (i) => ({
      ACKCRAWL_SQL_URL: db.url,
      ACKCRAWL_RUN_CONTROL: 'local',
      ACKCRAWL_DATA_DIR: join(dir, `data-${i}`),
      ACKCRAWL_ADMIN_TOKEN: adminToken,
      ACKCRAWL_MASTER_PORT: String(ports[i]),
      ACKCRAWL_SCHEDULE_SYNC_MS: '500',
      ACKCRAWL_SCHEDULE_MISFIRE_GRACE_MS: '1000',
      ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'warn',
    });
    // One at a time: the first migrates the scratch database.
    await start(0, envOf);
    await start(1, envOf);
  });

  after(async () => {
    for (const m of masters) await m.stop('SIGTERM');
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const api = (i = 0) => {
    const a = apis[i];
    if (!a) throw new Error(`no master ${i}`);
    return a;
  };
  const makeJob = async (name: string): Promise<string> => {
    const made = await api()<{ id: string }>('POST', '/jobs', { name, seeds: ['http://127.0.0.1:9/'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.id;
  };
  const setSchedule = async (jobId: string, body: Record<string, unknown>, via = 0) => {
    const put = await api(via)('PUT', `/jobs/${jobId}/schedule`, {
      expression: EVERY_3S,
      timeZone: 'Europe/Paris',
      ...body,
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    return put.body;
  };
  const fires = async (jobId: string, via = 0): Promise<Fire[]> => {
    const page = await api(via)<{ items: Fire[] }>('GET', `/jobs/${jobId}/schedule/fires?limit=500`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return page.body.items.reverse();
  };
  const runs = async (jobId: string): Promise<Run[]> =>
    (await api()<{ items: Run[] }>('GET', `/jobs/${jobId}/runs?limit=500`)).body.items;
  const settled = (f: Fire[]) => f.filter((x) => x.outcome !== 'claimed');

  test('bad schedules are refused with every problem listed; GET shows the next fire times', async () => {
    const jobId = await makeJob('bad-schedule');
    const bad = await api()<{ error: { code: string; problems: { field: string }[] } }>(
      'PUT',
      `/jobs/${jobId}/schedule`,
      {
        expression: '99 * * * *',
        timeZone: 'Nowhere/Atlantis',
      },
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'INVALID_SCHEDULE');
    assert.deepEqual(bad.body.error.problems.map((p) => p.field).sort(), ['expression', 'timeZone']);
    const none = await api()<{ error: { code: string } }>('GET', `/jobs/${jobId}/schedule`);
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'SCHEDULE_NOT_FOUND');
    await setSchedule(jobId, { expression: '0 9 * * 1', enabled: false });
    const shown = await api()<{ enabled: boolean; nextFireTimes: string[] }>(
      'GET',
      `/jobs/${jobId}/schedule?next=3`,
    );
    assert.equal(shown.body.enabled, false);
    assert.deepEqual(shown.body.nextFireTimes, [], 'a paused schedule has no next fire times');
    const resumed = await api(1)<{ nextFireTimes: string[] }>('POST', `/jobs/${jobId}/schedule/resume`);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.nextFireTimes.length, 5);
    for (const at of resumed.body.nextFireTimes) {
      // Monday 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer.
      assert.match(at, /T0[78]:00:00\.000Z$/);
      assert.equal(new Date(at).getUTCDay(), 1);
    }
    assert.equal((await api()('DELETE', `/jobs/${jobId}/schedule`)).status, 204);
    assert.equal((await api()('GET', `/jobs/${jobId}/schedule`)).status, 404);
  });

  test('each fire time makes exactly one run across both masters; skip and queue hold back overlaps', async () => {
    const allowJob = await makeJob('every-3s-allow');
    const skipJob = await makeJob('every-3s-skip');
    const queueJob = await makeJob('every-3s-queue');
    // Set through different masters: the other learns it from SQL.
    await setSchedule(allowJob, { overlap: 'allow' }, 0);
    await setSchedule(skipJob, { overlap: 'skip' }, 1);
    await setSchedule(queueJob, { overlap: 'queue' }, 0);

    await waitFor(async () => settled(await fires(allowJob)).length >= 5, {
      timeoutMs: 40_000,
      message: 'five fire times of the allow schedule',
    });
    const allowFires = settled(await fires(allowJob));
    const times = allowFires.map((f) => Date.parse(f.fireAt));
    for (let i = 1; i < times.length; i += 1) {
      assert.equal(
        (times[i] ?? 0) - (times[i - 1] ?? 0),
        3_000,
        `no fire time lost or doubled: ${allowFires.map((f) => f.fireAt).join(', ')}`,
      );
    }
    assert.ok(allowFires.every((f) => f.outcome === 'started' && f.runId !== null));
    const allowRuns = await runs(allowJob);
    const runIds = new Set(allowFires.map((f) => f.runId));
    assert.equal(runIds.size, allowFires.length, 'one run per fire time');
    const allowSchedule = await api()<{ id: string }>('GET', `/jobs/${allowJob}/schedule`);
    for (const f of allowFires) {
      const run = allowRuns.find((r) => r.id === f.runId);
      assert.ok(run, `run ${f.runId} exists`);
      assert.deepEqual(run.scheduledBy, { scheduleId: allowSchedule.body.id, fireAt: f.fireAt });
    }
    const one = await api(1)<Run>('GET', `/runs/${allowFires[0]?.runId}`);
    assert.deepEqual(one.body.scheduledBy?.fireAt, allowFires[0]?.fireAt, 'GET /runs/{id} shows it too');
    assert.ok(
      allowRuns.length <= allowFires.length + 1,
      'no run beyond the fire times (one may be on its way)',
    );

    // No scheduler takes runs here, so the first run of skip and queue stays queued (not final).
    const skipFires = settled(await fires(skipJob));
    assert.ok(skipFires.length >= 3, JSON.stringify(skipFires));
    assert.deepEqual(
      skipFires.map((f) => f.outcome),
      ['started', ...skipFires.slice(1).map(() => 'skipped')],
    );
    assert.equal((await runs(skipJob)).length, 1);

    const queueFires = settled(await fires(queueJob));
    assert.deepEqual(
      queueFires.slice(0, 3).map((f) => f.outcome),
      ['started', 'waiting', 'skipped'],
    );
    const [active] = await runs(queueJob);
    assert.ok(active);
    assert.equal((await api(1)('POST', `/runs/${active.id}/cancel`)).status, 200);
    await waitFor(async () => (await fires(queueJob)).some((f, i) => i === 1 && f.outcome === 'started'), {
      timeoutMs: 10_000,
      message: 'the waiting fire time starts once the active run is cancelled',
    });
    const second = (await fires(queueJob))[1];
    assert.ok((await runs(queueJob)).some((r) => r.id === second?.runId && r.state !== 'cancelled'));

    for (const jobId of [allowJob, skipJob, queueJob]) {
      assert.equal((await api()('DELETE', `/jobs/${jobId}/schedule`)).status, 204);
    }
  });

  test('a restart after missed fire times: one run under run-once, none under skip', async () => {
    const onceJob = await makeJob('misfire-run-once');
    const skipJob = await makeJob('misfire-skip');
    await setSchedule(onceJob, { overlap: 'allow', misfire: 'run-once' });
    await setSchedule(skipJob, { overlap: 'allow', misfire: 'skip' });
    await waitFor(
      async () => settled(await fires(onceJob)).length >= 1 && settled(await fires(skipJob)).length >= 1,
      {
        timeoutMs: 15_000,
        message: 'a first fire time of each',
      },
    );
    for (const m of masters) await m.stop('SIGKILL');
    const downAt = Date.now();
    const before = { once: (await runsDirect(onceJob)).length, skip: (await runsDirect(skipJob)).length };
    const lastBefore = {
      once: (await firesDirect(onceJob)).at(-1),
      skip: (await firesDirect(skipJob)).at(-1),
    };
    // Over three fire times pass with no master up.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10_000 - (Date.now() - downAt))));
    await start(0, envOf);

    await waitFor(async () => (await fires(onceJob)).some((f) => f.missed >= 2), {
      timeoutMs: 15_000,
      message: 'the missed fire times of run-once folded into one',
    });
    await waitFor(async () => (await fires(skipJob)).some((f) => f.outcome === 'missed'), {
      timeoutMs: 15_000,
      message: 'the missed fire times of skip recorded',
    });
    // Counted with no master up, so that no fire time lands between reading fires and runs.
    await masters[0]?.stop('SIGTERM');
    const since = (f: Fire, last: { fireAt: string } | undefined) =>
      Date.parse(f.fireAt) > Date.parse(last?.fireAt ?? '');
    const onceAfter = (await firesDirect(onceJob)).filter((f) => since(f, lastBefore.once));
    const skipAfter = (await firesDirect(skipJob)).filter((f) => since(f, lastBefore.skip));
    const folded = onceAfter.find((f) => f.missed >= 2);
    assert.equal(folded?.outcome, 'started', JSON.stringify(onceAfter));
    assert.deepEqual(
      onceAfter.filter((f) => Date.parse(f.fireAt) <= Date.parse(folded?.fireAt ?? '')),
      folded === undefined ? [] : [folded],
      'the missed fire times came to one fire time and one run',
    );
    const missed = skipAfter.find((f) => f.outcome === 'missed');
    assert.ok(missed && missed.missed >= 2 && missed.runId === null, JSON.stringify(skipAfter));
    assert.ok(
      skipAfter.every((f) => f === missed || Date.parse(f.fireAt) > Date.parse(missed.fireAt)),
      'no other fire time of the downtime',
    );
    // Runs made since: under run-once the folded one plus on-time ones after the start; under skip only on-time ones.
    const startedOnce = onceAfter.filter((f) => f.outcome === 'started').length;
    const startedSkip = skipAfter.filter((f) => f.outcome === 'started').length;
    assert.equal((await runsDirect(onceJob)).length, before.once + startedOnce);
    assert.equal((await runsDirect(skipJob)).length, before.skip + startedSkip);
  });

  // While both masters are down the API cannot answer: read what it would from SQL through a
  // short-lived store instead.
  async function withStore<T>(
    fn: (store: import('../../shared/ports/sql-store.js').SqlStore) => Promise<T>,
  ): Promise<T> {
    const { openSqlStore } = await import('../../shared/adapters/sql-store/open.js');
    const store = await openSqlStore(db.url);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }
  function runsDirect(jobId: string) {
    return withStore(async (s) => (await s.runs.list({ jobId, limit: 500 })).items);
  }
  function firesDirect(jobId: string): Promise<Fire[]> {
    return withStore(async (s) => {
      const schedule = await s.schedules.getByJob(jobId);
      const items = schedule === null ? [] : (await s.schedules.listFires(schedule.id, { limit: 500 })).items;
      return items.reverse().map((f) => ({
        fireAt: new Date(f.fireAt).toISOString(),
        outcome: f.outcome,
        runId: f.runId,
        missed: f.missed,
        claimedBy: f.claimedBy,
      }));
    });
  }
});
