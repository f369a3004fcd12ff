import type { TokenRepository } from '../../../ports/sql-store.js';
import { LOWEST, decodeCursor, encodeCursor } from '../cursor.js';
import { KEY_LENGTHS } from '../migrations.js';
import { toToken } from '../rows.js';
import { key, limitOf, optionalWhole, scopes, whole } from '../values.js';
import { toPage, type StoreContext } from './context.js';

const LIST = 'tokens';

export function tokenRepository(ctx: StoreContext): TokenRepository {
  const { driver, sql, guard } = ctx;
  return {
    create: (token) =>
      guard('tokens.create', async () => {
        const kept = scopes(token.scopes);
        await driver.run(sql.tokenInsert, [
          key('id', token.id),
          key('name', token.name, KEY_LENGTHS.name),
          JSON.stringify(kept),
          key('hash', token.hash, KEY_LENGTHS.hash),
          whole('createdAt', token.createdAt),
          optionalWhole('revokedAt', token.revokedAt),
          optionalWhole('lastUsedAt', token.lastUsedAt),
        ]);
        return { ...token, scopes: kept };
      }),

    findByHash: (hash) =>
      guard('tokens.findByHash', async () => {
        const [row] = await driver.all(sql.tokenFindByHash, [hash]);
        return row === undefined ? null : toToken(row);
      }),

    list: (query) =>
      guard('tokens.list', async () => {
        const limit = limitOf(query);
        const [at, id] = query?.after
          ? decodeCursor(LIST, query.after, ['number', 'string'] as const)
          : [LOWEST.number, LOWEST.string];
        const rows = await driver.all(sql.tokenList, [at, id, limit + 1]);
        return toPage(rows, limit, toToken, (t) => encodeCursor(LIST, [t.createdAt, t.id]));
      }),

    revoke: (id, at) =>
      guard('tokens.revoke', async () => (await driver.run(sql.tokenRevoke, [id, whole('at', at)])) > 0),

    touch: (id, at) =>
      guard('tokens.touch', async () => {
        await driver.run(sql.tokenTouch, [id, whole('at', at)]);
      }),
  };
}
