import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Dispatcher, InFlight } from '../../scheduler/dispatch/dispatcher.js';
import type { CrashTally } from '../../scheduler/dispatch/crash-tally.js';
import { routeOutcome } from '../../scheduler/outcomes/route-outcome.js';
import { Settler } from '../../scheduler/outcomes/settler.js';
import { ValidatorsIndex, type CaptureUpdate } from '../../scheduler/recrawl/validators-index.js';
import { HostedRun } from '../../scheduler/runs/hosted-run.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import type { SettleResult, Settlement } from '../../shared/ports/frontier.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import type { OutcomeHeader } from '../../shared/protocol/messages.js';
import type { Lease } from '../../shared/protocol/task.js';
import { testJob } from '../helpers/test-job.js';

/** A sink that keeps what it is given. */
class ListSink implements PageSink {
  readonly written: SinkRecord[] = [];
  write(records: readonly SinkRecord[]): Promise<string | null> {
    this.written.push(...records);
    return Promise.resolve(`cp-${this.written.length}`);
  }
  recover(): Promise<SinkRecord[]> {
    return Promise.resolve([]);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const SITE = 'https://a.test/';
const record = (url: string): SinkRecord => ({ key: url, value: Buffer.from(`{"url":"${url}"}`) });

describe('recrawl in the scheduler: routing and settling', () => {
  let dir: string;
  let frontier: SqliteFrontier;
  let index: ValidatorsIndex;
  let sink: ListSink;
  let settles: number;
  let failSettles: number;

  const settlerWith = (captures: { record(u: readonly CaptureUpdate[]): void } = index): Settler => {
    const wrapped = Object.create(frontier) as SqliteFrontier;
    wrapped.settle = async (batch: Settlement): Promise<SettleResult> => {
      settles += 1;
      if (failSettles > 0) {
        failSettles -= 1;
        throw new StorageError('FRONTIER_IO', 'database is locked');
      }
      return frontier.settle(batch);
    };
    return new Settler({
      sink,
      frontier: wrapped,
      logger: silentLogger(),
      maxTotal: 0,
      captures,
      onSettled: () => undefined,
    });
  };

  async function leaseOf(runId: string, url: string): Promise<Lease> {
    await frontier.push([{ runId, url, host: 'a.test', depth: 0, priority: 0, parentUrl: null }]);
    const leases = await frontier.lease(100);
    const lease = leases.find((l) => l.runId === runId && l.url === url);
    assert.ok(lease);
    await frontier.release(leases.filter((l) => l !== lease));
    return lease;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `recrawl-settle-${randomUUID()}-`));
    frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
    index = new ValidatorsIndex({ path: join(dir, 'index.sqlite') });
    sink = new ListSink();
    settles = 0;
    failSettles = 0;
  });

  afterEach(async () => {
    index.close();
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Routes `header` for `lease` as a crawler's outcome, through a run of job `job`. */
  function route(settler: Settler, lease: Lease, header: OutcomeHeader, captureId: string): void {
    const run = new HostedRun(
      { runId: lease.runId, jobId: 'job', settings: testJob([SITE], { scope: 'host' }) },
      Date.now,
      (f) => f,
    );
    const flight = { lease, captureId } as InFlight;
    routeOutcome(
      {
        dispatcher: { completeFlight: () => flight } as unknown as Dispatcher,
        settler,
        crashes: { forget: () => undefined } as unknown as CrashTally,
        runOf: () => run,
        fallbackRetry: { retryDelayMs: 0, maxAttempts: 3 },
        recrawl: index,
        logger: silentLogger(),
      },
      'session',
      { header, record: record(lease.url).value },
    );
  }

  const header = (more: Partial<OutcomeHeader>): OutcomeHeader => ({
    type: 'outcome',
    taskId: 't',
    outcome: 'ok',
    failure: null,
    links: [],
    status: 200,
    ...more,
  });

  test('an ok page is indexed once its batch settles; a not-modified one follows the indexed links and is counted', async () => {
    const settler = settlerWith();
    const first = await leaseOf('run-1', SITE);
    route(
      settler,
      first,
      header({ links: [`${SITE}x`, `${SITE}y`], validators: { etag: '"v1"' } }),
      'capture-1',
    );
    assert.equal(index.lookup('job', SITE), null, 'nothing is indexed before the batch is durable');
    await settler.flush();
    assert.deepEqual(index.lookup('job', SITE), {
      validators: { captureId: 'capture-1', etag: '"v1"' },
      links: [`${SITE}x`, `${SITE}y`],
    });

    const again = await leaseOf('run-2', SITE);
    route(settler, again, header({ outcome: 'not-modified', status: 304 }), 'capture-2');
    await settler.flush();
    // The 304's run goes on through the links of the capture it confirmed.
    const next = await frontier.lease(10);
    assert.deepEqual(next.map((l) => `${l.runId} ${l.url} ${l.depth}`).sort(), [
      `run-1 ${SITE}x 1`,
      `run-1 ${SITE}y 1`,
      `run-2 ${SITE}x 1`,
      `run-2 ${SITE}y 1`,
    ]);
    assert.equal(index.notModified('run-2'), 1);
    assert.equal(index.lookup('job', SITE)?.validators.captureId, 'capture-1', 'the capture with the body');
    const stats = await frontier.stats('run-2');
    assert.deepEqual([stats.done, stats.failed], [1, 0], 'a not-modified page is done, not failed');
  });

  test('a batch whose settle is retried is indexed and counted once', async () => {
    const settler = settlerWith();
    index.record([
      {
        jobId: 'job',
        runId: 'run-1',
        url: SITE,
        kind: 'ok',
        captureId: 'c1',
        validators: { etag: '"e"' },
        links: [],
      },
    ]);
    failSettles = 1;
    const lease = await leaseOf('run-2', SITE);
    route(settler, lease, header({ outcome: 'not-modified', status: 304 }), 'c2');
    await settler.flush();
    assert.equal(settles, 2, 'the settle failed once and was tried again');
    assert.equal(index.notModified('run-2'), 1);
  });

  test('a failed page is not indexed; an index that cannot be written does not hold up the crawl', async () => {
    const lease = await leaseOf('run-1', SITE);
    const settler = settlerWith();
    route(
      settler,
      lease,
      header({
        outcome: 'failed',
        status: 404,
        failure: { code: 'HTTP_404', message: 'HTTP 404', retriable: false, status: 404, retryAfterMs: null },
      }),
      'c1',
    );
    await settler.flush();
    const broken = settlerWith({
      record: () => {
        throw new Error('disk I/O error');
      },
    });
    const other = await leaseOf('run-1', `${SITE}other`);
    route(broken, other, header({ validators: { etag: '"e"' } }), 'c2');
    await broken.flush();
    assert.equal(index.lookup('job', SITE), null);
    const stats = await frontier.stats('run-1');
    assert.deepEqual([stats.done, stats.failed], [1, 1], 'the page settled all the same');
    assert.equal(sink.written.length, 2, 'both records written');
  });
});
