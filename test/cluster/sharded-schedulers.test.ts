import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  closestStarts,
  peakConcurrency,
  smallestStartGap,
  stallNote,
  startPolitenessSite,
  type PolitenessSite,
} from '../fixtures/politeness-site.js';
import { scratchPostgres } from '../helpers/postgres-scratch.js';
import { deleteTopic, tailTopic, type TopicTail } from '../helpers/kafka-topic.js';
import { countByUrl, recordTags } from '../helpers/records.js';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { TestRole } from '../helpers/role-process.js';
import { masterApi } from '../helpers/serve.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait-for.js';
import { controlPlaneEnv, startMasterRole } from '../helpers/control-plane-env.js';

const HOSTS = 12;
const PAGES_PER_HOST = 40;
const LIMITS = { concurrency: 2, delayMs: 100 };

interface RunBody {
  id: string;
  state: string;
  counters: { done: number; failed: number; queued: number; inFlight: number };
}

/**
 * Two schedulers on one queue prefix with the hosts split among them (ACKCRAWL_SHARDS=8), one
 * agent whose crawlers serve both, master and PostgreSQL: one run over 12 hosts. One scheduler is
 * killed with kill -9 part way and not restarted: the other takes its hosts. Checked at the
 * servers: no host ever had more requests in flight, or closer together, than its limits; every
 * page is in Kafka; duplicates counted.
 */
describe('several schedulers: hosts split among them', () => {
  let site: PolitenessSite;
  let db: { url: string; drop: () => Promise<void> };
  let dir: string;
  let master: TestRole;
  const schedulers: TestRole[] = [];
  let agent: TestRole;
  let api: ReturnType<typeof masterApi>;
  let topic: string;
  let tail: TopicTail | undefined;

  before(async () => {
    const specs = Array.from({ length: HOSTS }, (_, i) => ({
      name: `h${i}`,
      pages: PAGES_PER_HOST,
      responseMs: 20,
    }));
    site = await startPolitenessSite(specs);
    db = await scratchPostgres();
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-sharded-'));
    const plane = await controlPlaneEnv(db.url, dir, {
      ACKCRAWL_CONCURRENCY: '16',
      ACKCRAWL_SHARDS: '8',
    });
    topic = plane.topic;
    ({ master, api } = await startMasterRole(plane));
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      urls.push(`ws://127.0.0.1:${port}/crawlers`);
      schedulers.push(
        new TestRole('scheduler', {
          ...plane.env,
          ACKCRAWL_LISTEN_PORT: String(port),
          ACKCRAWL_DATA_DIR: join(dir, `scheduler-${i}`),
          ACKCRAWL_SCHEDULER_ID: `scheduler-${i}`,
          ACKCRAWL_LOG_LEVEL: process.env.ACKCRAWL_TEST_LOG_LEVEL ?? 'info',
        }).start(),
      );
    }
    agent = new TestRole('agent', { ...plane.env, ACKCRAWL_SCHEDULER_URL: urls.join(' ') }).start();
    tail = await tailTopic(topic);
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    for (const s of schedulers) await s.stop('SIGTERM');
    await master?.stop('SIGTERM');
    await tail?.close();
    if (topic) await deleteTopic(topic).catch(() => undefined);
    await site?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const records = (runId: string): PageRecord[] =>
    (tail?.records ?? [])
      .map((r) => JSON.parse(r.value.toString('utf8')) as PageRecord)
      .filter((r) => recordTags(r).runId === runId);
  const run = async (runId: string): Promise<RunBody> => (await api<RunBody>('GET', `/runs/${runId}`)).body;
  /** The smallest gap between two request starts at each host, as its server saw them, and where. */
  const gaps = new Map<string, { gap: number; pair: string }>();
  /** When the second scheduler was killed: a failure says whether its starts came before or after. */
  let killedAt = 0;
  const sinceKill = (t: number): string => `kill${t >= killedAt ? '+' : ''}${t - killedAt} ms`;
  /** The shard moves each scheduler logged, timed against the kill. */
  const moves = (): string =>
    schedulers
      .map((s, i) =>
        s.stderr
          .split('\n')
          .filter((line) => line.startsWith('{') && line.includes('shards moved'))
          .map((line) => {
            const entry = JSON.parse(line) as { time: number; taken: number[]; given: number[] };
            return `scheduler ${i} at ${sinceKill(entry.time)}: took [${entry.taken.join(',')}], gave [${entry.given.join(',')}]`;
          })
          .join('; '),
      )
      .join(' | ');
  const logs = (): string => schedulers.map((s, i) => `scheduler ${i}: ${s.stderr.slice(-3_000)}`).join('\n');

  test('both schedulers crawl their own hosts; one killed, the other finishes its hosts; limits held at every host', async (t) => {
    const job = await api<{ id: string }>('POST', '/jobs', {
      name: 'sharded',
      seeds: [...site.hosts.values()].map((h) => h.url),
      allowPrivate: true,
      hostConcurrency: LIMITS.concurrency,
      hostDelayMs: LIMITS.delayMs,
    });
    assert.equal(job.status, 201, JSON.stringify(job.body));
    const created = await api<RunBody>('POST', `/jobs/${job.body.id}/runs`);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = created.body.id;
    const pages = HOSTS * (PAGES_PER_HOST + 1);

    // Both schedulers took hosts (each logs the shards it takes).
    await waitFor(() => schedulers.every((s) => s.stderr.includes('shards moved')), {
      timeoutMs: 30_000,
      message: () => `both schedulers own shards (${logs()})`,
    });
    await waitFor(() => new Set(records(runId).map((r) => r.url)).size >= pages * 0.3, {
      timeoutMs: 60_000,
      message: () => `a third of the pages (${records(runId).length}; ${logs()})`,
    });
    killedAt = Date.now();
    await schedulers[1]?.stop('SIGKILL');

    await waitFor(async () => (await run(runId)).state === 'succeeded', {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: async () =>
        `the run succeeded (${JSON.stringify(await run(runId))}; ${new Set(records(runId).map((r) => r.url)).size} pages; ${logs()})`,
    });
    await waitFor(() => new Set(records(runId).map((r) => r.url)).size === pages, {
      timeoutMs: 30_000,
      message: () => `every page in Kafka (${new Set(records(runId).map((r) => r.url)).size} of ${pages})`,
    });
    const mine = records(runId);
    const counts = countByUrl(mine);
    const duplicates = mine.length - counts.size;
    t.diagnostic(`${counts.size} pages, ${duplicates} duplicate records`);
    assert.ok(duplicates <= pages * 0.005, `duplicates ${duplicates} within 0.5% of ${pages}`);
    await site.settle();
    for (const [name, h] of site.hosts) {
      const ok = new Set(h.spans.filter((s) => s.status === 200).map((s) => s.path)).size;
      assert.equal(ok, PAGES_PER_HOST + 1, `${name}: every page served`);
      const peak = peakConcurrency(h.spans);
      const gap = smallestStartGap(h.spans);
      const pair = closestStarts(h.spans);
      const which = pair
        ? ` (${pair[0].path} at ${sinceKill(pair[0].start)}, ${pair[1].path} at ${sinceKill(pair[1].start)}${stallNote(pair)})`
        : '';
      t.diagnostic(`${name}: peak ${peak} in flight, smallest start gap ${gap} ms${which}`);
      assert.ok(peak <= LIMITS.concurrency, `${name}: ${peak} in flight, limit ${LIMITS.concurrency}`);
      gaps.set(name, { gap, pair: which });
    }
    // The run's counters add up every scheduler's ledger, the killed one's as it last said (up to
    // a heartbeat before it died): close to every page, not exact.
    const final = await run(runId);
    t.diagnostic(`counters at the end: ${JSON.stringify(final.counters)}`);
    t.diagnostic(`shard moves: ${moves()}`);
    assert.ok(
      final.counters.done >= pages * 0.9 && final.counters.done <= pages * 1.05,
      `the run's counters add every scheduler's share (${JSON.stringify(final)})`,
    );
  });

  test('every host kept its delay between two starts', () => {
    assert.equal(gaps.size, HOSTS, 'the crawl above ran');
    for (const [name, { gap, pair }] of gaps) {
      // The servers stamp starts on a thread of their own, at nice -20 when allowed; the scheduler's
      // margin covers its clock's lead, and 20 ms are left for a loaded CPU's wait before a server's
      // thread runs. A longer stall of that thread is measured, and the gap counted from before it.
      assert.ok(
        gap >= LIMITS.delayMs - 20,
        `${name}: two starts ${gap} ms apart${pair}, limit ${LIMITS.delayMs}; site thread at nice ${site.stampPriority ?? '0 (not raised)'}; shard moves: ${moves()}`,
      );
    }
  });
});
