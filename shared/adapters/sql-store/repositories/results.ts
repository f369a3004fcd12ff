import type { ResultRepository } from '../../../ports/sql-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import { toResult } from '../rows.js';
import { KEY_LENGTHS } from '../migrations.js';
import { json, key, limitOf, optionalKey, optionalText, optionalWhole, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'results';

export function resultRepository(ctx: StoreContext): ResultRepository {
  const { driver, sql, guard } = ctx;
  const strategy = sql.resultUpsert;
  return {
    upsert: (rows) =>
      guard('results.upsert', async () => {
        if (rows.length === 0) return;
        const params = rows.map((r) => [
          key('captureId', r.captureId),
          key('runId', r.runId),
          key('jobId', r.jobId),
          text(r.url),
          optionalWhole('status', r.status),
          json(r.data),
          whole('at', r.at),
          optionalText(r.title),
          optionalText(r.author),
          optionalWhole('publishedAt', r.publishedAt),
          optionalKey('language', r.language, KEY_LENGTHS.language),
          optionalText(r.description),
          optionalText(r.canonicalUrl),
          optionalText(r.mainText),
          optionalWhole('fetchedAt', r.fetchedAt),
        ]);
        await driver.transaction(async (s) => {
          for (const p of params) {
            if (strategy.kind === 'single') await s.run(strategy.sql, p);
            else if ((await s.run(strategy.update, p)) === 0) await s.run(strategy.insert, p);
          }
        });
      }),

    list: (runId, query) =>
      guard('results.list', async () => {
        const limit = limitOf(query);
        const [at, captureId] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.resultList, [runId, at, captureId, limit + 1]);
        return toPage(rows, limit, toResult, (r) => encodeCursor(LIST, [r.at, r.captureId]));
      }),
  };
}
