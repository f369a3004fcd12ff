import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN_FILE, bootstrapAdminToken } from '../../master/api/auth/bootstrap-admin.js';
import { hashSecret } from '../../master/api/auth/secrets.js';
import { openSqlStore } from '../../shared/adapters/sql-store/open.js';
import { silentLogger } from '../../shared/logger.js';
import type { SqlStore } from '../../shared/ports/sql-store.js';

describe('the bootstrap admin token', () => {
  let dir: string;
  let store: SqlStore;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-bootstrap-'));
    store = await openSqlStore(`sqlite:${join(dir, 'master.db')}`);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const boot = (dataDir: string, configured?: string) =>
    bootstrapAdminToken({
      tokens: store.tokens,
      dataDir,
      configured,
      now: Date.now,
      newId: randomUUID,
      logger: silentLogger(),
    });
  const active = async () =>
    (await store.tokens.list({ limit: 500 })).items.filter(
      (t) => t.revokedAt === null && t.name === 'bootstrap admin',
    );

  test('generated once into <dataDir>/admin-token (0600), then read from there; stored hashed', async () => {
    const data = join(dir, 'generated');
    const first = await boot(data);
    assert.equal(first.source, 'created');
    const path = join(data, ADMIN_TOKEN_FILE);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, 'utf8').trim(), first.secret);
    const second = await boot(data);
    assert.deepEqual([second.source, second.secret], ['file', first.secret]);
    const row = await store.tokens.findByHash(hashSecret(first.secret));
    assert.deepEqual(row?.scopes, ['admin']);
    assert.equal((await active()).length, 1, 'one row for one secret');
  });

  test('a revoked bootstrap token stays revoked at the next start', async () => {
    const data = join(dir, 'generated');
    const { secret } = await boot(data);
    const row = await store.tokens.findByHash(hashSecret(secret));
    assert.ok(row && (await store.tokens.revoke(row.id, Date.now())));
    const again = await boot(data);
    assert.equal(again.active, false);
    assert.equal(await store.tokens.findByHash(hashSecret(secret)), null);
  });

  test('ACKCRAWL_ADMIN_TOKEN wins; a new one revokes the bootstrap tokens before it; bad ones are refused', async () => {
    const data = join(dir, 'configured');
    const a = `configured-a-${randomUUID()}`;
    const b = `configured-b-${randomUUID()}`;
    assert.equal((await boot(data, a)).source, 'config');
    assert.ok(await store.tokens.findByHash(hashSecret(a)));
    await boot(data, b);
    assert.equal(await store.tokens.findByHash(hashSecret(a)), null, 'the old one is revoked');
    assert.ok(await store.tokens.findByHash(hashSecret(b)));
    assert.deepEqual(
      (await active()).map((t) => t.hash),
      [hashSecret(b)],
    );
    await assert.rejects(boot(data, 'short'), { code: 'CONFIG_INVALID' });
    const broken = join(dir, 'broken');
    await boot(broken);
    writeFileSync(join(broken, ADMIN_TOKEN_FILE), 'two words\n');
    await assert.rejects(boot(broken), /admin token file .* one word of at least 16 characters/);
  });
});
