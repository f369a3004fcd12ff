import assert from 'node:assert/strict';
import type { TokenScope } from '../../../shared/ports/sql-store.js';
import type { DefineCase } from '../sql-store.contract.js';
import { allPages, rejectsWith, token } from './expect.js';

export function tokenCases(define: DefineCase): void {
  define('tokens: create, findByHash, touch, revoke; a revoked token is not found', async ({ store }) => {
    const t = await store.tokens.create(
      token({ id: 't1', scopes: ['read', 'operate'], hash: 'ab'.repeat(32) }),
    );
    assert.deepEqual(await store.tokens.findByHash('ab'.repeat(32)), t);
    assert.equal(await store.tokens.findByHash('cd'.repeat(32)), null);
    await store.tokens.touch('t1', 5_000);
    assert.equal((await store.tokens.findByHash('ab'.repeat(32)))?.lastUsedAt, 5_000);
    await store.tokens.touch('missing', 5_000);

    assert.equal(await store.tokens.revoke('t1', 6_000), true);
    assert.equal(await store.tokens.findByHash('ab'.repeat(32)), null);
    assert.equal(await store.tokens.revoke('t1', 7_000), false);
    assert.equal(await store.tokens.revoke('missing', 7_000), false);
    // Still listed, with when it was revoked.
    const listed = (await store.tokens.list()).items;
    assert.equal(listed.length, 1);
    assert.equal(listed[0]?.revokedAt, 6_000);
  });

  define('tokens: a taken id or hash is SQL_CONFLICT; unknown scopes are refused', async ({ store }) => {
    await store.tokens.create(token({ id: 'dup', hash: 'e'.repeat(64) }));
    await rejectsWith(store.tokens.create(token({ id: 'dup' })), 'SQL_CONFLICT', { field: 'id' });
    await rejectsWith(store.tokens.create(token({ hash: 'e'.repeat(64) })), 'SQL_CONFLICT', {
      field: 'hash',
    });
    await rejectsWith(store.tokens.create(token({ scopes: ['root' as TokenScope] })), 'SQL_INVALID_VALUE', {
      field: 'scopes',
    });
    const admin = await store.tokens.create(token({ scopes: ['admin', 'admin'] }));
    assert.deepEqual(admin.scopes, ['admin']);
    assert.deepEqual((await store.tokens.findByHash(admin.hash))?.scopes, ['admin']);
  });

  define('tokens: listed oldest first, paged', async ({ store }) => {
    for (let i = 0; i < 5; i += 1) await store.tokens.create(token({ id: `t${i}`, createdAt: 10 - i }));
    const { pages, items } = await allPages((after) => store.tokens.list({ limit: 2, after }));
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      items.map((t) => t.id),
      ['t4', 't3', 't2', 't1', 't0'],
    );
  });
}
