import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientToken, schedulerToken, tokenPath } from '../../shared/config/cluster-token.js';
import { ConfigError } from '../../shared/errors.js';

const withDir = (run: (dir: string) => void): void => {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-token-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe('the cluster token file', () => {
  test('a scheduler without a token creates one (0600) once; later starts and clients read it', () => {
    withDir((dir) => {
      const dataDir = join(dir, 'data');
      const first = schedulerToken(undefined, dataDir);
      assert.equal(first.source, 'created');
      assert.match(first.token, /^[0-9a-f]{48}$/);
      assert.equal(statSync(tokenPath(dataDir)).mode & 0o777, 0o600);
      assert.equal(readFileSync(tokenPath(dataDir), 'utf8').trim(), first.token);
      const again = schedulerToken(undefined, dataDir);
      assert.deepEqual({ token: again.token, source: again.source }, { token: first.token, source: 'file' });
      assert.equal(clientToken(undefined, dataDir), first.token);
      assert.equal(clientToken('', dataDir), first.token, 'an empty ACKCRAWL_TOKEN is no token');
    });
  });

  test('a configured token wins and writes nothing', () => {
    withDir((dir) => {
      assert.deepEqual(schedulerToken('configured-token-0123', dir).source, 'config');
      assert.throws(() => statSync(tokenPath(dir)), /ENOENT/);
      assert.equal(clientToken('configured-token-0123', dir), 'configured-token-0123');
    });
  });

  test('a client with neither fails with a ConfigError that says what to set', () => {
    withDir((dir) => {
      assert.throws(
        () => clientToken(undefined, dir),
        (err: unknown) =>
          err instanceof ConfigError &&
          /ACKCRAWL_TOKEN/.test(err.message) &&
          /ACKCRAWL_DATA_DIR/.test(err.message) &&
          err.message.includes(tokenPath(dir)),
      );
    });
  });

  test('a token file that holds no token is reported, not used', () => {
    withDir((dir) => {
      writeFileSync(tokenPath(dir), 'short\n');
      assert.throws(() => clientToken(undefined, dir), /does not hold a token/);
      assert.throws(() => schedulerToken(undefined, dir), /does not hold a token/);
    });
  });
});
