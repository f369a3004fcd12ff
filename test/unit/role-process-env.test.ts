import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { roleProcessEnv } from '../../shared/processes/node-flags.js';
import { nodeSpawner } from '../../shared/processes/spawner.js';

test("a role's environment gets glibc's arena limit and a fixed mmap threshold", () => {
  const env = roleProcessEnv({ ACKCRAWL_TOKEN: 't' });
  assert.equal(env.MALLOC_ARENA_MAX, '2');
  assert.equal(env.MALLOC_MMAP_THRESHOLD_, '1048576');
  assert.equal(env.ACKCRAWL_TOKEN, 't');
});

test('what the environment already sets is kept, one tunable at a time', () => {
  const mine = { MALLOC_ARENA_MAX: '8' };
  const env = roleProcessEnv(mine);
  assert.equal(env.MALLOC_ARENA_MAX, '8');
  assert.equal(env.MALLOC_MMAP_THRESHOLD_, '1048576');
  assert.equal(mine.MALLOC_ARENA_MAX, '8');
  assert.equal('MALLOC_MMAP_THRESHOLD_' in mine, false, "the caller's object is not changed");
  const both = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '65536' };
  assert.deepEqual(roleProcessEnv(both), both);
});

test('a crawler process started by the spawner runs with them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ackcrawl-role-env-'));
  try {
    const script = join(dir, 'print-env.cjs');
    writeFileSync(
      script,
      `process.send({ arena: process.env.MALLOC_ARENA_MAX, mmap: process.env.MALLOC_MMAP_THRESHOLD_ }, () => process.exit(0));`,
    );
    const child = nodeSpawner(script, { PATH: process.env.PATH }, 'test')(0, false);
    const [message] = (await once(child, 'message')) as [{ arena?: string; mmap?: string }];
    assert.deepEqual(message, { arena: '2', mmap: '1048576' });
    if (child.exitCode === null) await once(child, 'exit');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
