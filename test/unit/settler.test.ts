import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeenCache } from '../../scheduler/outcomes/seen-cache.js';
import { Settler } from '../../scheduler/outcomes/settler.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import type { Frontier, SettleResult, Settlement } from '../../shared/ports/frontier.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease, NewTask } from '../../shared/protocol/task.js';
import { waitFor } from '../helpers/wait-for.js';
import { pino } from 'pino';

/** An in-memory page sink whose writes can be held open or made to fail. */
class FakeSink implements PageSink {
  readonly written: SinkRecord[] = [];
  /** Records of every write call, including failed ones. */
  readonly calls: (readonly SinkRecord[])[] = [];
  failNext = 0;
  /** What the failing writes throw. */
  failWith: () => Error = () => new StorageError('SINK_IO', 'disk on fire');
  /** Keys whose records this sink refuses for good (like Kafka refusing an oversized message). */
  refuse = new Set<string>();
  private hold: Promise<void> | null = null;

  /** Makes the next writes wait until the returned function is called. */
  holdWrites(): () => void {
    let release!: () => void;
    this.hold = new Promise((resolve) => (release = resolve));
    return () => {
      this.hold = null;
      release();
    };
  }

  async write(records: readonly SinkRecord[]): Promise<string | null> {
    this.calls.push(records);
    if (this.hold) await this.hold;
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw this.failWith();
    }
    const refused = records.find((r) => this.refuse.has(r.key) && r.value.includes('"outcome":"ok"'));
    if (refused) throw new StorageError('SINK_RECORD_TOO_LARGE', `${refused.key} too large`);
    this.written.push(...records);
    return `cp-${this.written.length}`;
  }

  async recover(): Promise<SinkRecord[]> {
    return [];
  }

  async close(): Promise<void> {}
}

/** The real frontier, with settle() calls counted and, on demand, failed. */
function countingFrontier(inner: Frontier): Frontier & { settles: Settlement[]; failSettles: number } {
  const wrapper = Object.create(inner) as Frontier & { settles: Settlement[]; failSettles: number };
  wrapper.settles = [];
  wrapper.failSettles = 0;
  wrapper.settle = async (batch: Settlement): Promise<SettleResult> => {
    wrapper.settles.push(batch);
    if (wrapper.failSettles > 0) {
      wrapper.failSettles -= 1;
      throw new StorageError('FRONTIER_IO', 'database is locked');
    }
    return inner.settle(batch);
  };
  return wrapper;
}

const record = (url: string): SinkRecord => ({
  key: url,
  value: Buffer.from(JSON.stringify({ runId: 'default', url, outcome: 'ok' })),
});

const newTask = (url: string, depth = 0): NewTask => ({
  runId: 'default',
  url,
  host: new URL(url).host,
  depth,
  priority: 0,
  parentUrl: null,
});

describe('Settler', () => {
  let dir: string;
  let sqlite: SqliteFrontier;
  let frontier: ReturnType<typeof countingFrontier>;
  let sink: FakeSink;
  let settled: { result: SettleResult; acks: number; retries: number; failures: number }[];
  let settler: Settler;

  const makeSettler = (maxTotal = 0, seen?: SeenCache): Settler =>
    new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal,
      ...(seen ? { seen } : {}),
      onSettled: (result, counts) => settled.push({ result, ...counts }),
    });

  async function leaseAll(urls: string[]): Promise<Lease[]> {
    await sqlite.push(urls.map((u) => newTask(u)));
    const leases = await sqlite.lease(urls.length);
    assert.equal(leases.length, urls.length);
    return leases;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `settler-${randomUUID()}-`));
    sqlite = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
    frontier = countingFrontier(sqlite);
    sink = new FakeSink();
    settled = [];
    settler = makeSettler();
  });

  afterEach(async () => {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('ack after durability: the task stays leased while the sink write is pending', async () => {
    const [lease] = await leaseAll(['https://a.test/1']);
    assert.ok(lease);
    const release = sink.holdWrites();

    settler.ack(lease, record(lease.url), []);
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'sink write started' });
    // The write is in progress but not confirmed: nothing may be settled yet.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(frontier.settles.length, 0);
    const before = await sqlite.stats();
    assert.equal(before.leased, 1);
    assert.equal(before.done, 0);
    assert.equal(await sqlite.checkpoint(), null);

    release();
    await settler.flush();
    const after = await sqlite.stats();
    assert.equal(after.leased, 0);
    assert.equal(after.done, 1);
    assert.equal(await sqlite.checkpoint(), 'cp-1', 'the sink checkpoint is stored with the settle');
    assert.deepEqual(
      sink.written.map((r) => r.key),
      [lease.url],
    );
    assert.deepEqual(settled, [
      {
        result: { applied: 1, accepted: 0 },
        acks: 1,
        retries: 0,
        failures: 0,
        byRun: new Map([['default', 1]]),
      },
    ]);
  });

  test('commitWaitMs: how long the batch being made durable has been at it; 0 before and after', async () => {
    let now = 1_000;
    settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      clock: () => now,
      onSettled: () => {},
    });
    assert.equal(settler.commitWaitMs(), 0, 'nothing committing');
    const [lease] = await leaseAll(['https://a.test/1']);
    assert.ok(lease);
    const release = sink.holdWrites();
    settler.ack(lease, record(lease.url), []);
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'sink write started' });
    now += 7_000;
    assert.equal(settler.commitWaitMs(), 7_000, 'the held write has waited 7 s');
    assert.deepEqual(settler.stalled(5_000), { since: 1_000, code: null }, 'stalled: waiting, not failing');
    assert.equal(settler.stalled(10_000), null, 'not for that long');
    release();
    await settler.flush();
    assert.equal(settler.commitWaitMs(), 0, 'durable: nothing waits');
    assert.equal(settler.stalled(0), null);
  });

  test('a final failure is recorded in the sink before the frontier marks it failed', async () => {
    const [lease] = await leaseAll(['https://a.test/gone']);
    assert.ok(lease);
    const release = sink.holdWrites();
    settler.fail(lease, record(lease.url), 'HTTP_404: HTTP 404');
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'sink write started' });
    assert.equal((await sqlite.stats()).failed, 0);
    release();
    await settler.flush();
    const stats = await sqlite.stats();
    assert.equal(stats.failed, 1);
    assert.equal(stats.leased, 0);
    assert.equal(sink.written.length, 1);
  });

  test('a sink failure keeps the batch: written once the sink recovers, settled once', async () => {
    const [lease] = await leaseAll(['https://a.test/1']);
    assert.ok(lease);
    sink.failNext = 1;

    settler.ack(lease, record(lease.url), [newTask('https://a.test/child', 1)]);
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'first (failing) write' });
    assert.equal(sink.written.length, 0);
    assert.equal((await sqlite.stats()).leased, 1, 'not acked while the record is not durable');

    await settler.flush();
    assert.equal(sink.calls.length, 2, 'the write was tried again');
    assert.deepEqual(
      sink.written.map((r) => r.key),
      [lease.url],
    );
    assert.equal(frontier.settles.length, 1);
    const stats = await sqlite.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.total, 2, 'the discovered link was pushed with the ack');
    assert.equal(settled.length, 1);
  });

  test('a frontier settle failure retries the settle only: no second sink write', async () => {
    const [lease] = await leaseAll(['https://a.test/1']);
    assert.ok(lease);
    frontier.failSettles = 1;

    settler.ack(lease, record(lease.url), []);
    await settler.flush();

    assert.equal(sink.calls.length, 1, 'the record was written exactly once');
    assert.equal(sink.written.length, 1);
    assert.equal(frontier.settles.length, 2, 'the settle was tried again');
    assert.equal(frontier.settles[1]?.checkpoint, 'cp-1', 'with the checkpoint of the first write');
    assert.equal((await sqlite.stats()).done, 1);
    assert.equal(settled.length, 1, 'onSettled once');
  });

  test('group commit: outcomes that arrive during a write go together in the next batch', async () => {
    const [a, b, c] = await leaseAll(['https://a.test/1', 'https://b.test/1', 'https://c.test/1']);
    assert.ok(a && b && c);
    const release = sink.holdWrites();

    settler.ack(a, record(a.url), []);
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'first write' });
    settler.ack(b, record(b.url), []);
    settler.fail(c, record(c.url), 'HTTP_410: gone');
    assert.equal(settler.backlog, 2);

    release();
    await settler.flush();
    assert.deepEqual(
      sink.calls.map((call) => call.map((r) => r.key)),
      [[a.url], [b.url, c.url]],
    );
    assert.equal(frontier.settles.length, 2);
    assert.equal(settler.backlog, 0);
    const stats = await sqlite.stats();
    assert.equal(stats.done, 2);
    assert.equal(stats.failed, 1);
    assert.equal(await sqlite.checkpoint(), 'cp-3');
  });

  test('a retry writes no record and puts the task back for later', async () => {
    const [lease] = await leaseAll(['https://a.test/flaky']);
    assert.ok(lease);
    settler.retry(lease, 60_000, 'HTTP_503: HTTP 503');
    await settler.flush();

    assert.equal(sink.written.length, 0);
    const stats = await sqlite.stats();
    assert.equal(stats.leased, 0);
    assert.equal(stats.delayed, 1);
    assert.deepEqual(settled, [
      { result: { applied: 1, accepted: 0 }, acks: 0, retries: 1, failures: 0, byRun: new Map() },
    ]);
  });

  test('recovered outcomes settle without writing their record a second time', async () => {
    const [ok, failed] = await leaseAll(['https://a.test/ok', 'https://a.test/failed']);
    assert.ok(ok && failed);
    settler.ackRecovered(ok, [newTask('https://a.test/found', 1)]);
    settler.failRecovered(failed, 'HTTP_404: HTTP 404');
    await settler.flush();

    assert.equal(sink.written.length, 0);
    const stats = await sqlite.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.failed, 1);
    assert.equal(stats.ready, 1, 'the recovered page’s links were pushed');
  });

  test('maxTotal caps the discovered tasks the frontier accepts', async () => {
    settler = makeSettler(3);
    const [lease] = await leaseAll(['https://a.test/']);
    assert.ok(lease);
    const links = ['https://a.test/1', 'https://a.test/2', 'https://a.test/3', 'https://a.test/4'];
    settler.ack(
      lease,
      record(lease.url),
      links.map((u) => newTask(u, 1)),
    );
    await settler.flush();
    assert.equal(settled[0]?.result.accepted, 2);
    assert.equal((await sqlite.stats()).total, 3);
  });

  test('with a seen-cache: known links are not sent to the frontier, settled ones become known', async () => {
    const seen = new SeenCache();
    settler = makeSettler(0, seen);
    const [first, second] = await leaseAll(['https://a.test/', 'https://a.test/x']);
    assert.ok(first && second);
    settler.ack(first, record(first.url), [newTask('https://a.test/new', 1)]);
    await settler.flush();
    assert.ok(seen.has('default', 'https://a.test/new'), 'a settled discovery is remembered');
    settler.ack(second, record(second.url), [
      newTask('https://a.test/new', 1),
      newTask('https://a.test/other', 1),
    ]);
    await settler.flush();
    const last = frontier.settles.at(-1);
    assert.deepEqual(
      last?.acks.flatMap((a) => (a.discovered ?? []).map((t) => t.url)),
      ['https://a.test/other'],
      'only the unknown link reaches the frontier',
    );
  });

  test('unknownLinks: the links whose settle made them known are left out, per run', async () => {
    const seen = new SeenCache();
    settler = makeSettler(0, seen);
    const [lease] = await leaseAll(['https://a.test/']);
    assert.ok(lease);
    const links = ['https://a.test/new', 'https://a.test/other'];
    assert.deepEqual(settler.unknownLinks('default', links), links, 'nothing known before the settle');
    settler.ack(lease, record(lease.url), [newTask('https://a.test/new', 1)]);
    await settler.flush();
    assert.deepEqual(settler.unknownLinks('default', links), ['https://a.test/other']);
    assert.deepEqual(settler.unknownLinks('another-run', links), links, 'another run knows neither');
    assert.deepEqual(
      makeSettler().unknownLinks('default', links),
      links,
      'without a seen-cache: all of them',
    );
  });

  test('a record the sink refuses for good fails that URL only, with a failure record', async () => {
    const [good, bad] = await leaseAll(['https://a.test/good', 'https://a.test/bad']);
    assert.ok(good && bad);
    sink.refuse.add(bad.url);
    const okRecord = (url: string): SinkRecord => ({
      key: url,
      value: Buffer.from(JSON.stringify({ runId: 'default', url, outcome: 'ok' })),
    });
    settler.ack(good, okRecord(good.url), [newTask('https://a.test/from-good', 1)]);
    settler.ack(bad, okRecord(bad.url), [newTask('https://a.test/from-bad', 1)]);
    await settler.flush();
    const byKey = new Map(
      sink.written.map((r) => [
        r.key,
        JSON.parse(r.value.toString()) as { outcome: string; error?: { code: string } },
      ]),
    );
    assert.equal(byKey.get(good.url)?.outcome, 'ok');
    assert.equal(byKey.get(bad.url)?.outcome, 'failed');
    assert.equal(byKey.get(bad.url)?.error?.code, 'RECORD_UNWRITABLE');
    const stats = await sqlite.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.failed, 1);
    assert.equal(stats.leased, 0, 'nothing left hanging');
    assert.equal(stats.total, 4, 'the links of both pages were queued, the refused one’s included');
    const queued = (await sqlite.lease(10)).map((l) => l.url).sort();
    assert.deepEqual(queued, ['https://a.test/from-bad', 'https://a.test/from-good']);
  });

  test('outcomes of leases the frontier reports dead are dropped: no record, no settlement', async () => {
    const [alive, lost] = await leaseAll(['https://a.test/alive', 'https://a.test/lost']);
    assert.ok(alive && lost);
    const frontierWithLiveness = Object.create(frontier) as typeof frontier;
    frontierWithLiveness.isLeaseLive = (lease) => lease.taskId !== lost.taskId;
    settler = new Settler({
      sink,
      frontier: frontierWithLiveness,
      logger: silentLogger(),
      maxTotal: 0,
      onSettled: () => undefined,
    });
    settler.ack(alive, record(alive.url), []);
    settler.ack(lost, record(lost.url), [newTask('https://a.test/from-lost', 1)]);
    await settler.flush();
    assert.deepEqual(
      sink.written.map((r) => r.key),
      [alive.url],
      'only the live lease’s record is written',
    );
    const stats = await sqlite.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.leased, 1, 'the lost lease is left to the frontier');
    assert.equal(stats.total, 2, 'nothing discovered by the lost outcome');
  });

  test('links of a stale ack are not remembered as seen: the page fetched again can queue them', async () => {
    const seen = new SeenCache();
    settler = makeSettler(0, seen);
    const [lease] = await leaseAll(['https://a.test/p']);
    assert.ok(lease);
    await sqlite.release([lease]);
    settler.ack(lease, record(lease.url), [newTask('https://a.test/child', 1)]);
    await settler.flush();
    assert.equal(
      seen.has('default', 'https://a.test/child'),
      false,
      'a stale ack queued nothing, so nothing is seen',
    );
    const [again] = await sqlite.lease(1);
    assert.ok(again);
    settler.ack(again, record(again.url), [newTask('https://a.test/child', 1)]);
    await settler.flush();
    assert.equal((await sqlite.stats()).total, 2, 'the child is queued when the page settles for real');
  });

  test('two copies of one task in a batch, one lease dead: the live copy keeps its record', async () => {
    const [lease] = await leaseAll(['https://a.test/twice']);
    assert.ok(lease);
    const deadCopy = { ...lease, leaseId: `${lease.leaseId}-old` };
    const frontierWithLiveness = Object.create(frontier) as typeof frontier;
    frontierWithLiveness.isLeaseLive = (ref) => ref.leaseId === lease.leaseId;
    settler = new Settler({
      sink,
      frontier: frontierWithLiveness,
      logger: silentLogger(),
      maxTotal: 0,
      onSettled: () => undefined,
    });
    settler.ack(deadCopy, record(lease.url), []);
    settler.ack(lease, record(lease.url), []);
    await settler.flush();
    assert.equal(sink.written.length, 1, 'the live copy’s record is written');
    assert.equal((await sqlite.stats()).done, 1);
  });

  test('close waits for what was submitted, then takes no more', async () => {
    const [a, b] = await leaseAll(['https://a.test/1', 'https://a.test/2']);
    assert.ok(a && b);
    settler.ack(a, record(a.url), []);
    await settler.close();
    assert.equal((await sqlite.stats()).done, 1);

    settler.ack(b, record(b.url), []);
    await settler.flush();
    assert.equal(sink.calls.length, 1, 'nothing written after close');
    assert.equal((await sqlite.stats()).leased, 1);
  });
  test('URLs refused at the page cap are not remembered: a higher cap later queues them', async () => {
    const seen = new SeenCache();
    let cap = 3;
    settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: () => cap,
      seen,
      onSettled: (result, counts) => settled.push({ result, ...counts }),
    });
    const [home, other] = await leaseAll(['https://a.test/', 'https://a.test/other']);
    assert.ok(home && other);
    const links = ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'].map((u) => newTask(u, 1));
    settler.ack(home, record(home.url), links);
    await settler.flush();
    assert.equal((await sqlite.stats()).total, 3, 'the cap let one link in');
    assert.equal(settled[0]?.result.capped, true, 'the frontier says the cap cut the list');
    assert.equal(seen.has('default', 'https://a.test/2'), false, 'a refused URL is not seen');
    assert.equal(seen.has('default', 'https://a.test/3'), false);

    // The crawl is given a higher cap; another page links to the refused URLs.
    cap = 10;
    settler.ack(other, record(other.url), links);
    await settler.flush();
    const stats = await sqlite.stats();
    assert.equal(stats.total, 5, 'the URLs refused before are queued now');
    assert.notEqual(settled[1]?.result.capped, true);
    for (const url of ['https://a.test/1', 'https://a.test/2', 'https://a.test/3']) {
      assert.ok(seen.has('default', url), `${url} is seen once the frontier has it`);
    }
  });

  test('known links are still remembered at the cap when none of them was refused', async () => {
    const seen = new SeenCache();
    settler = new Settler({ sink, frontier, logger: silentLogger(), maxTotal: 2, seen, onSettled: () => {} });
    const [a, b] = await leaseAll(['https://a.test/', 'https://a.test/b']);
    assert.ok(a && b);
    settler.ack(a, record(a.url), [newTask('https://a.test/b', 1)]);
    await settler.flush();
    assert.equal(frontier.settles.length, 1);
    assert.ok(seen.has('default', 'https://a.test/b'), 'a URL the frontier already had is seen, cap or not');
  });

  test('the backlog is bounded in bytes: accepting turns false, and true again once settled', async () => {
    settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      maxBacklogBytes: 300_000,
      onSettled: () => {},
    });
    const leases = await leaseAll(['https://a.test/1', 'https://a.test/2', 'https://a.test/3']);
    const big = (url: string): SinkRecord => ({
      key: url,
      value: Buffer.from(JSON.stringify({ runId: 'default', url, outcome: 'ok', body: 'x'.repeat(120_000) })),
    });
    const release = sink.holdWrites();
    const [first, second, third] = leases;
    assert.ok(first && second && third);
    settler.ack(first, big(first.url), []);
    assert.ok(settler.accepting, 'one large outcome is under the bound');
    settler.ack(second, big(second.url), []);
    assert.ok(settler.accepting, 'two are under the bound');
    settler.ack(third, big(third.url), []);
    assert.equal(settler.accepting, false, 'three reach it: dispatch stops, far below the count bound');
    assert.ok(settler.backlogBytes >= 360_000);
    await waitFor(() => sink.calls.length === 1, { timeoutMs: 2_000, message: 'write started' });
    assert.equal(settler.accepting, false, 'the batch being committed still counts');
    release();
    await settler.flush();
    assert.ok(settler.accepting);
    assert.equal(settler.backlogBytes, 0);
    assert.equal((await sqlite.stats()).done, 3);
  });

  test('a commit hands the sink at most maxBatchBytes of records; the rest goes next', async () => {
    settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      maxBatchBytes: 250_000,
      onSettled: () => {},
    });
    const urls = Array.from({ length: 5 }, (_, i) => `https://a.test/${i}`);
    const leases = await leaseAll(urls);
    const release = sink.holdWrites();
    for (const lease of leases) {
      settler.ack(
        lease,
        { key: lease.url, value: Buffer.from(`{"url":"${lease.url}","b":"${'y'.repeat(100_000)}"}`) },
        [],
      );
    }
    release();
    await settler.flush();
    assert.deepEqual(
      sink.calls.map((c) => c.length),
      [2, 2, 1],
      'two records of 100 KB per commit',
    );
    assert.equal((await sqlite.stats()).done, 5);
    const huge = await leaseAll(['https://a.test/huge']);
    settler.ack(huge[0] as Lease, { key: 'https://a.test/huge', value: Buffer.alloc(400_000, 0x20) }, []);
    await settler.flush();
    assert.equal(sink.calls.at(-1)?.length, 1, 'a record larger than the bound goes alone');
  });

  test('a blob store that refuses our credentials stalls the crawl; it never fails pages', async () => {
    const lines: { msg: string; code?: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let now = 1_000_000;
    settler = new Settler({
      sink,
      frontier,
      logger,
      maxTotal: 0,
      clock: () => now,
      stallLogIntervalMs: 30_000,
      onSettled: (result, counts) => settled.push({ result, ...counts }),
    });
    const [page] = await leaseAll(['https://a.test/large']);
    assert.ok(page);
    sink.failNext = 4;
    sink.failWith = () =>
      new StorageError(
        'BLOB_STORE_AUTH',
        'cannot store blob: S3 at http://127.0.0.1:9000 refused the credentials',
      );
    settler.ack(page, record(page.url), [newTask('https://a.test/child', 1)]);
    await waitFor(() => sink.calls.length >= 3, { timeoutMs: 5_000, message: 'retries under way' });
    now += 40_000; // the stall outlasts one report interval
    await settler.flush();
    assert.equal(sink.calls.length, 5, 'the same batch was tried until the store took it');
    assert.ok(sink.calls.every((call) => call.length === 1 && call[0]?.key === page.url));
    const written = JSON.parse(sink.written[0]?.value.toString() ?? '{}') as { outcome?: string };
    assert.equal(written.outcome, 'ok', 'the page record itself, not a failure record');
    const stats = await sqlite.stats();
    assert.equal(stats.done, 1);
    assert.equal(stats.failed, 0);
    assert.equal(stats.total, 2, 'its link was queued');
    const stalls = lines.filter((l) => l.code === 'BLOB_STORE_AUTH');
    assert.equal(
      stalls.length,
      2,
      'logged when the stall began and once more after the interval, not per retry',
    );
    assert.match(stalls[0]?.msg ?? '', /refused the credentials/);
    assert.ok(
      lines.some((l) => /durable again/.test(l.msg)),
      'the end of the stall is logged',
    );
  });

  test('after a retriable failure mid-way through one-by-one writes, written records are not written again', async () => {
    const [a, b, c] = await leaseAll(['https://a.test/a', 'https://a.test/b', 'https://a.test/c']);
    assert.ok(a && b && c);
    sink.refuse.add(c.url);
    const original = sink.write.bind(sink);
    let failOnce = true;
    sink.write = async (records) => {
      // The whole batch is refused (c is too large); then a's write works, b's fails once (Kafka
      // blinked), and the retry must go on with b.
      if (records.length === 1 && records[0]?.key === b.url && failOnce) {
        failOnce = false;
        sink.calls.push(records);
        throw new StorageError('SINK_UNAVAILABLE', 'Kafka is unavailable');
      }
      return original(records);
    };
    for (const lease of [a, b, c]) settler.ack(lease, record(lease.url), []);
    await settler.flush();
    const keys = sink.written.map((r) => r.key);
    assert.deepEqual(keys, [a.url, b.url, c.url], 'each URL written once, c as a failure record');
    const stats = await sqlite.stats();
    assert.equal(stats.done, 2);
    assert.equal(stats.failed, 1);
  });

  test('the refused record’s failure record keeps its depth and parent', async () => {
    const [lease] = await leaseAll(['https://a.test/deep']);
    assert.ok(lease);
    sink.refuse.add(lease.url);
    const value = Buffer.from(
      JSON.stringify({
        runId: 'default',
        url: lease.url,
        outcome: 'ok',
        depth: 3,
        parentUrl: 'https://a.test/up',
        attempt: 2,
      }),
    );
    settler.ack(lease, { key: lease.url, value }, []);
    await settler.flush();
    const failure = JSON.parse(sink.written[0]?.value.toString() ?? '{}') as Record<string, unknown>;
    assert.equal(failure.outcome, 'failed');
    assert.equal(failure.depth, 3);
    assert.equal(failure.parentUrl, 'https://a.test/up');
    assert.equal(failure.attempt, 2);
  });
  test('close during a stall returns: the outcomes are given up unacknowledged, their leases handed back', async () => {
    const [a, b] = await leaseAll(['https://a.test/a', 'https://a.test/b']);
    assert.ok(a && b);
    sink.failNext = 1_000;
    sink.failWith = () => new StorageError('SINK_DISK_FULL', 'the disk holding /out is full');
    settler.ack(a, record(a.url), []);
    await waitFor(() => sink.calls.length >= 2, { timeoutMs: 2_000, message: 'stalled and retrying' });
    settler.ack(b, record(b.url), []);
    const started = Date.now();
    await settler.close();
    assert.ok(Date.now() - started < 1_000, 'close did not wait out the backoff or the stall');
    assert.equal(sink.written.length, 0);
    const stats = await sqlite.stats();
    assert.equal(stats.done, 0, 'nothing acknowledged');
    assert.equal(stats.leased, 0, 'the leases were handed back');
    assert.equal(stats.ready, 2, 'both tasks are fetched again');
  });
});
