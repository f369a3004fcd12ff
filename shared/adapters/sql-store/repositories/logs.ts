import type { LogRepository } from '../../../ports/sql-store.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { KEY_LENGTHS } from '../migrations.js';
import { toLog } from '../rows.js';
import { LOG_INSERT_CHUNK } from '../statements.js';
import { key, limitOf, text, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'logs';

export function logRepository(ctx: StoreContext): LogRepository {
  const { driver, sql, guard } = ctx;
  return {
    append: (rows) =>
      guard('logs.append', async () => {
        if (rows.length === 0) return;
        const params = rows.map((r) => [
          key('runId', r.runId),
          text(r.url),
          key('code', r.code, KEY_LENGTHS.code),
          whole('attempts', r.attempts),
          text(r.lastError),
          r.final ? 1 : 0,
          whole('at', r.at),
        ]);
        await driver.transaction(async (s) => {
          for (let i = 0; i < params.length; i += LOG_INSERT_CHUNK) {
            const chunk = params.slice(i, i + LOG_INSERT_CHUNK);
            await s.run(sql.logInsert(chunk.length), chunk.flat());
          }
        });
      }),

    list: (runId, query) =>
      guard('logs.list', async () => {
        const limit = limitOf(query);
        // Ids grow from 1; the cursor keeps them as decimal text (BIGINT may pass 2^53 one day).
        const [after] = query?.after ? decodeCursor(LIST, query.after, ['string'] as const) : ['0'];
        if (!/^\d{1,19}$/.test(after)) return { items: [], next: null };
        const rows = await driver.all(query?.finalOnly ? sql.logListFinal : sql.logList, [
          runId,
          Number(after),
          limit + 1,
        ]);
        return toPage(rows, limit, toLog, (l) => encodeCursor(LIST, [l.id]));
      }),

    get: (id) =>
      guard('logs.get', async () => {
        if (!/^\d{1,19}$/.test(id)) return null;
        const [row] = await driver.all(sql.logGet, [Number(id)]);
        return row === undefined ? null : toLog(row);
      }),

    ofUrl: (runId, url, limit) =>
      guard('logs.ofUrl', async () =>
        (await driver.all(sql.logOfUrl, [key('runId', runId), text(url), limitOf({ limit })])).map(toLog),
      ),

    markRetried: (id, at) =>
      guard('logs.markRetried', async () => {
        if (!/^\d{1,19}$/.test(id)) return false;
        return (await driver.run(sql.logMarkRetried, [whole('at', at), Number(id)])) === 1;
      }),

    retriesToQueue: (runId, limit) =>
      guard('logs.retriesToQueue', async () =>
        (await driver.all(sql.logRetriesToQueue, [key('runId', runId), limitOf({ limit })])).map(toLog),
      ),

    markRequeued: (id, at) =>
      guard('logs.markRequeued', async () => {
        if (!/^\d{1,19}$/.test(id)) return;
        await driver.run(sql.logMarkRequeued, [whole('at', at), Number(id)]);
      }),

    countSince: (at) =>
      guard('logs.countSince', async () => {
        const rows = await driver.all(sql.alerts.logCountSince, [whole('at', at)]);
        return rows.map((r) => ({
          runId: String(r.run_id),
          code: String(r.code),
          final: r.final === true || r.final === 1 || r.final === '1',
          count: Number(r.n),
        }));
      }),
  };
}
