import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Dispatcher, InFlight } from '../../scheduler/dispatch/dispatcher.js';
import type { CrashTally } from '../../scheduler/dispatch/crash-tally.js';
import { routeOutcome } from '../../scheduler/outcomes/route-outcome.js';
import { SeenCache } from '../../scheduler/outcomes/seen-cache.js';
import { Settler } from '../../scheduler/outcomes/settler.js';
import { HostedRun } from '../../scheduler/runs/hosted-run.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { silentLogger } from '../../shared/logger.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import type { Lease } from '../../shared/protocol/task.js';
import { testJob } from '../helpers/test-job.js';

const SITE = 'https://a.test/';

/** A sink that confirms every write at once. */
const sink: PageSink = {
  write: (records: readonly SinkRecord[]) => Promise.resolve(`cp-${records.length}`),
  recover: () => Promise.resolve([]),
  close: () => Promise.resolve(),
};

describe('routing an outcome: links the run already has', () => {
  let dir: string;
  let frontier: SqliteFrontier;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `route-known-${randomUUID()}-`));
    frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
  });

  afterEach(async () => {
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('links the seen-cache knows never reach the run’s scope and depth rules', async () => {
    const settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      seen: new SeenCache(),
      onSettled: () => undefined,
    });
    const run = new HostedRun(
      { runId: 'run-1', jobId: 'job', settings: testJob([SITE], { scope: 'host' }) },
      Date.now,
      (f) => f,
    );
    // What the run's link filter (scope, depth, priority: a URL parse per link) is asked about.
    const filtered: string[][] = [];
    const filter = run.linkFilter;
    Object.defineProperty(run, 'linkFilter', {
      value: (links: readonly string[], parent: Lease) => {
        filtered.push([...links]);
        return filter(links, parent);
      },
    });
    await frontier.push(
      [SITE, `${SITE}b`].map((url) => ({
        runId: 'run-1',
        url,
        host: 'a.test',
        depth: 0,
        priority: 0,
        parentUrl: null,
      })),
    );
    const [first, second] = await frontier.lease(2);
    assert.ok(first && second);
    const route = (lease: Lease, links: string[]): void =>
      routeOutcome(
        {
          dispatcher: { completeFlight: () => ({ lease }) as InFlight } as unknown as Dispatcher,
          settler,
          crashes: { forget: () => undefined } as unknown as CrashTally,
          runOf: () => run,
          fallbackRetry: { retryDelayMs: 0, maxAttempts: 3 },
          logger: silentLogger(),
        },
        'session',
        {
          header: { type: 'outcome', taskId: 't', outcome: 'ok', failure: null, links, status: 200 },
          record: Buffer.from(`{"url":"${lease.url}"}`),
        },
      );

    route(first, [`${SITE}x`]);
    await settler.flush();
    route(second, [`${SITE}x`, `${SITE}y`, 'https://elsewhere.test/']);
    await settler.flush();

    assert.deepEqual(filtered, [[`${SITE}x`], [`${SITE}y`, 'https://elsewhere.test/']]);
    const stats = await frontier.stats();
    assert.equal(stats.total, 4, 'the two seeds, x and y: the other host is out of scope');
  });
});
