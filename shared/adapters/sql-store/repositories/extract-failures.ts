import type { ExtractFailureRepository } from '../../../ports/sql-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import { KEY_LENGTHS } from '../migrations.js';
import { toExtractFailure } from '../rows.js';
import { key, limitOf, optionalKey, optionalText, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'extract-failures';

export function extractFailureRepository(ctx: StoreContext): ExtractFailureRepository {
  const { driver, sql, guard } = ctx;
  const strategy = sql.failureUpsert;
  return {
    record: (rows) =>
      guard('extractFailures.record', async () => {
        if (rows.length === 0) return;
        const params = rows.map((r) => [
          key('source', r.source, KEY_LENGTHS.source),
          optionalKey('captureId', r.captureId),
          optionalKey('runId', r.runId),
          optionalText(r.url),
          key('code', r.code, KEY_LENGTHS.code),
          text(r.reason),
          whole('at', r.at),
        ]);
        await driver.transaction(async (s) => {
          for (const p of params) {
            if (strategy.kind === 'single') await s.run(strategy.sql, p);
            else if ((await s.run(strategy.update, p)) === 0) await s.run(strategy.insert, p);
          }
        });
      }),

    list: (query) =>
      guard('extractFailures.list', async () => {
        const limit = limitOf(query);
        const [at, source] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.failureList, [at, source, limit + 1]);
        return toPage(rows, limit, toExtractFailure, (r) => encodeCursor(LIST, [r.at, r.source]));
      }),
  };
}
