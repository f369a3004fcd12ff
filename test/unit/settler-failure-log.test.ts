import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorCodeOf, Settler } from '../../scheduler/outcomes/settler.js';
import { openSqliteFrontier, type SqliteFrontier } from '../../shared/adapters/frontier/sqlite-frontier.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import type { PageSink, SinkRecord } from '../../shared/ports/page-sink.js';
import type { LogRow } from '../../shared/ports/sql-store.js';
import type { Lease } from '../../shared/protocol/task.js';

/** A sink that keeps what it is given, and fails its next writes on demand. */
class ListSink implements PageSink {
  readonly written: SinkRecord[] = [];
  failNext = 0;
  async write(records: readonly SinkRecord[]): Promise<string | null> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new StorageError('SINK_IO', 'disk on fire');
    }
    this.written.push(...records);
    return `cp-${this.written.length}`;
  }
  async recover(): Promise<SinkRecord[]> {
    return [];
  }
  async close(): Promise<void> {}
}

const record = (url: string): SinkRecord => ({ key: url, value: Buffer.from(JSON.stringify({ url })) });

describe('Settler failure log (onFailure)', () => {
  let dir: string;
  let frontier: SqliteFrontier;
  let sink: ListSink;
  let rows: LogRow[];
  let settler: Settler;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `settler-log-${randomUUID()}-`));
    frontier = openSqliteFrontier({ path: join(dir, 'frontier.sqlite') });
    sink = new ListSink();
    rows = [];
    settler = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      onSettled: () => undefined,
      onFailure: (row) => rows.push(row),
      clock: () => 1_000,
    });
  });

  afterEach(async () => {
    await settler.close();
    await frontier.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function lease(runId: string, urls: string[]): Promise<Lease[]> {
    await frontier.push(
      urls.map((url) => ({ runId, url, host: new URL(url).host, depth: 0, priority: 0, parentUrl: null })),
    );
    return frontier.lease(urls.length);
  }

  test('every retry and final failure is logged with its run, code and attempts; acks are not', async () => {
    const [ok, flaky, gone] = await lease('run-a', [
      'https://a.test/ok',
      'https://a.test/flaky',
      'https://a.test/gone',
    ]);
    assert.ok(ok && flaky && gone);
    settler.ack(ok, record(ok.url), []);
    settler.retry(flaky, 0, 'HTTP_503: HTTP 503');
    settler.fail(gone, record(gone.url), 'HTTP_404: HTTP 404');
    await settler.flush();
    assert.deepEqual(
      rows.sort((a, b) => a.url.localeCompare(b.url)),
      [
        {
          runId: 'run-a',
          url: 'https://a.test/flaky',
          code: 'HTTP_503',
          attempts: 1,
          lastError: 'HTTP_503: HTTP 503',
          final: false,
          at: 1_000,
        },
        {
          runId: 'run-a',
          url: 'https://a.test/gone',
          code: 'HTTP_404',
          attempts: 1,
          lastError: 'HTTP_404: HTTP 404',
          final: true,
          at: 1_000,
        },
      ],
    );
  });

  test('a failure is logged only once it is settled, and once, however often the sink failed first', async () => {
    const [gone] = await lease('run-b', ['https://b.test/gone']);
    assert.ok(gone);
    sink.failNext = 2;
    settler.fail(gone, record(gone.url), 'HTTP_410: gone');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(rows.length, 0, 'nothing logged while the outcome is not durable');
    await settler.flush();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.final, true);
    assert.equal((await frontier.stats('run-b')).failed, 1);
  });

  test('a log hook that throws costs the settlement nothing', async () => {
    const throwing = new Settler({
      sink,
      frontier,
      logger: silentLogger(),
      maxTotal: 0,
      onSettled: () => undefined,
      onFailure: () => {
        throw new Error('log full');
      },
    });
    const [gone] = await lease('run-c', ['https://c.test/gone']);
    assert.ok(gone);
    throwing.fail(gone, record(gone.url), 'HTTP_404: HTTP 404');
    await throwing.flush();
    assert.equal((await frontier.stats('run-c')).failed, 1);
    await throwing.close();
  });

  test('errorCodeOf reads the code in front of an outcome error', () => {
    assert.equal(errorCodeOf('FETCH_TIMEOUT: took too long'), 'FETCH_TIMEOUT');
    assert.equal(errorCodeOf('no code here'), 'UNKNOWN');
  });
});
