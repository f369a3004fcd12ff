import { InvalidInputError } from '../../../errors.js';
import type { SeenRepository } from '../../../ports/sql-store.js';
import type { SqlSession, SqlValue } from '../driver.js';
import { KEY_LENGTHS } from '../migrations.js';
import { SEEN_CHUNK } from '../seen-statements.js';
import { key, tally, whole } from '../values.js';
import type { StoreContext } from './context.js';

const URL_KEY = /^[0-9a-f]{32}$/;

/**
 * Each key once, each one checked (32 lower-case hex digits), sorted: two claims of overlapping
 * batches then take their row locks in the same order and cannot deadlock each other.
 */
function cleanKeys(keys: readonly string[]): string[] {
  const unique = [...new Set(keys)].sort();
  for (const k of unique) {
    if (typeof k !== 'string' || !URL_KEY.test(k)) {
      throw new InvalidInputError('SQL_INVALID_VALUE', 'url keys must be 32 lower-case hex digits', {
        details: { field: 'keys' },
      });
    }
  }
  return unique;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += SEEN_CHUNK) out.push(items.slice(i, i + SEEN_CHUNK));
  return out;
}

const keyOf = (row: Record<string, unknown>): string => String(row['url_key']);

/**
 * The shared seen-set. A claim is one transaction over every chunk, so a batch is claimed wholly
 * or not at all; with `returning` each chunk is one statement, with `lock-then-insert` (SQL Server)
 * the locking read and the insert of each chunk run in the same transaction.
 */
export function seenRepository(ctx: StoreContext): SeenRepository {
  const { driver, sql, guard } = ctx;
  const scoped = (scope: string, runId: string): [string, string] => [
    key('scope', scope, KEY_LENGTHS.name),
    key('runId', runId),
  ];

  const claimChunk = async (
    s: SqlSession,
    head: [string, string],
    chunk: readonly string[],
    tail: [string, number],
  ): Promise<string[]> => {
    const rows = (keys: readonly string[]): SqlValue[] => keys.flatMap((k) => [...head, k, ...tail]);
    const claim = sql.seen.seenClaim;
    if (claim.kind === 'returning') return (await s.all(claim.claim(chunk.length), rows(chunk))).map(keyOf);
    const taken = new Set((await s.all(claim.lock(chunk.length), [...head, ...chunk])).map(keyOf));
    const fresh = chunk.filter((k) => !taken.has(k));
    if (fresh.length > 0) await s.run(claim.insert(fresh.length), rows(fresh));
    return fresh;
  };

  return {
    known: (scope, runId, keys) =>
      guard('seen.known', async () => {
        const head = scoped(scope, runId);
        const found = new Set<string>();
        for (const chunk of chunks(cleanKeys(keys))) {
          for (const row of await driver.all(sql.seen.seenKnown(chunk.length), [...head, ...chunk]))
            found.add(keyOf(row));
        }
        return found;
      }),

    claim: (scope, runId, keys, by) =>
      guard('seen.claim', async () => {
        const head = scoped(scope, runId);
        const tail: [string, number] = [key('schedulerId', by.schedulerId), whole('at', by.at)];
        const unique = cleanKeys(keys);
        if (unique.length === 0) return new Set<string>();
        return driver.transaction(async (s) => {
          const won = new Set<string>();
          for (const chunk of chunks(unique))
            for (const k of await claimChunk(s, head, chunk, tail)) won.add(k);
          return won;
        });
      }),

    count: (scope, runId) =>
      guard('seen.count', async () => {
        const [row] = await driver.all(sql.seen.seenCount, scoped(scope, runId));
        return Number(row?.['n'] ?? 0);
      }),

    forget: (scope, runId) =>
      guard('seen.forget', () =>
        driver.transaction(async (s) => {
          const head = scoped(scope, runId);
          await s.run(sql.seen.countsForget, head);
          return s.run(sql.seen.seenForget, head);
        }),
      ),

    reportCounts: (scope, schedulerId, at, counts) =>
      guard('seen.reportCounts', async () => {
        if (counts.length === 0) return;
        const scopeKey = key('scope', scope, KEY_LENGTHS.name);
        const by = key('schedulerId', schedulerId);
        const when = whole('at', at);
        const params = counts.map((c) => [
          scopeKey,
          key('runId', c.runId),
          by,
          tally('total', c.total),
          tally('done', c.done),
          tally('failed', c.failed),
          when,
        ]);
        const upsert = sql.seen.countsUpsert;
        await driver.transaction(async (s) => {
          for (const p of params) {
            if (upsert.kind === 'single') await s.run(upsert.sql, p);
            else if ((await s.run(upsert.update, p)) === 0) await s.run(upsert.insert, p);
          }
        });
      }),

    listCounts: (scope) =>
      guard('seen.listCounts', async () =>
        (await driver.all(sql.seen.countsList, [key('scope', scope, KEY_LENGTHS.name)])).map((row) => ({
          schedulerId: String(row['scheduler_id']),
          runId: String(row['run_id']),
          total: Number(row['total']),
          done: Number(row['done']),
          failed: Number(row['failed']),
          at: Number(row['at']),
        })),
      ),
  };
}
