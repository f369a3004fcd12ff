import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { field, loadConfig } from '../../shared/config/load.js';
import { ConfigError } from '../../shared/errors.js';

const schema = z.object({
  hostDelayMs: field.int().default(500),
  scope: z.enum(['host', 'any']).default('host'),
});

function withFile(content: string, fn: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'config-file-'));
  try {
    const path = join(dir, 'c.json');
    writeFileSync(path, content);
    fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a config file sets values; the environment wins over it', () => {
  withFile('{"hostDelayMs": 50, "scope": "any"}', (path) => {
    const config = loadConfig(schema, { ACKCRAWL_CONFIG: path, ACKCRAWL_HOST_DELAY_MS: '7' });
    assert.equal(config.hostDelayMs, 7);
    assert.equal(config.scope, 'any');
  });
});

test('unknown keys, bad values and unreadable files are all reported at once', () => {
  withFile('{"hostDelay": 50, "scope": "everywhere"}', (path) => {
    assert.throws(
      () => loadConfig(schema, { ACKCRAWL_CONFIG: path, ACKCRAWL_HOST_DELAY_MS: '-1' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 3, err.problems.join('\n'));
        assert.ok(err.problems.some((p) => p.includes("unknown setting 'hostDelay'")));
        return true;
      },
    );
  });
  assert.throws(() => loadConfig(schema, { ACKCRAWL_CONFIG: '/nonexistent/ackcrawl.json' }), /config file/);
  withFile('[1,2]', (path) =>
    assert.throws(() => loadConfig(schema, { ACKCRAWL_CONFIG: path }), /JSON object/),
  );
});
