import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FailureLog } from '../../scheduler/runs/failure-log.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { StorageError } from '../../shared/errors.js';
import { silentLogger } from '../../shared/logger.js';
import type { LogRepository, LogRow, SqlStore } from '../../shared/ports/sql-store.js';
import { waitFor } from '../helpers/wait-for.js';

const row = (url: string, final = false): LogRow => ({
  runId: 'run-1',
  url,
  code: 'HTTP_503',
  attempts: 1,
  lastError: 'HTTP_503: HTTP 503',
  final,
  at: 1_000,
});

describe('FailureLog', () => {
  let dir: string;
  let store: SqlStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), `failure-log-${randomUUID()}-`));
    store = await openSqlStore(`sqlite:${join(dir, 'ackcrawl.db')}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const listed = async (): Promise<string[]> =>
    (await store.logs.list('run-1', { limit: 500 })).items.map((r) => r.url);

  test('rows handed over are written in batches, without the caller waiting', async () => {
    const appends: number[] = [];
    const logs: Pick<LogRepository, 'append'> = {
      append: async (rows) => {
        appends.push(rows.length);
        await store.logs.append(rows);
      },
    };
    const log = new FailureLog({ logs, logger: silentLogger(), batchRows: 2, flushMs: 20 });
    for (let i = 0; i < 5; i++) log.add(row(`https://a.test/${i}`, i === 4));
    assert.deepEqual(appends, [], 'add returns before anything is written');
    await waitFor(async () => (await listed()).length === 5, { message: 'five rows in SQL' });
    assert.ok(
      appends.every((n) => n <= 2),
      `batches of at most 2: ${appends.join(',')}`,
    );
    const final = await store.logs.list('run-1', { finalOnly: true });
    assert.deepEqual(
      final.items.map((r) => r.url),
      ['https://a.test/4'],
    );
    await log.close();
  });

  test('while SQL fails, rows wait (bounded, oldest dropped) and go once it answers', async () => {
    let down = true;
    const logs: Pick<LogRepository, 'append'> = {
      append: async (rows) => {
        if (down) throw new StorageError('SQL_UNAVAILABLE', 'database gone');
        await store.logs.append(rows);
      },
    };
    const log = new FailureLog({ logs, logger: silentLogger(), maxRows: 3, flushMs: 10 });
    for (let i = 0; i < 5; i++) log.add(row(`https://a.test/${i}`));
    await log.flush();
    assert.deepEqual(await listed(), []);
    down = false;
    await log.close();
    assert.deepEqual(await listed(), ['https://a.test/2', 'https://a.test/3', 'https://a.test/4']);
  });
});
