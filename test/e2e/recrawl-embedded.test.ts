import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startConditionalSite, type ConditionalSite } from '../helpers/conditional-site.js';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';

const PAGES: Record<string, string[]> = { '/': ['/a', '/b'], '/a': ['/a/deep'], '/a/deep': [], '/b': [] };
const PATHS = Object.keys(PAGES);

describe('embedded crawl: a second crawl with the first one’s recrawl index', () => {
  let site: ConditionalSite;
  let dir: string;
  const crawl = (out: string, env: NodeJS.ProcessEnv = {}) =>
    runCli(['crawl', site.url, '--out', out, '--allow-private', '--host-delay', '0', '--json'], env);

  before(async () => {
    site = await startConditionalSite(PAGES);
    dir = mkdtempSync(join(tmpdir(), 'ackcrawl-recrawl-embedded-'));
  });
  after(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('unchanged pages are not-modified, the changed one is fetched; the summary counts them', async () => {
    const first = join(dir, 'first');
    const one = await crawl(first);
    assert.equal(one.code, 0, one.stderr);
    assert.ok(existsSync(join(first, 'recrawl-index.sqlite')), 'the index is kept in the out folder');
    assert.equal(site.count({ conditional: true }), 0);

    site.change('/b');
    const second = join(dir, 'second');
    const two = await crawl(second, { ACKCRAWL_RECRAWL_INDEX: join(first, 'recrawl-index.sqlite') });
    assert.equal(two.code, 0, two.stderr);
    const summary = JSON.parse(two.stdout) as { ok: number; failed: number; notModified: number };
    assert.deepEqual([summary.ok, summary.failed, summary.notModified], [PATHS.length, 0, PATHS.length - 1]);

    const before = new Map(readRecords(first).map((r) => [new URL(r.url).pathname, r]));
    const after = new Map(readRecords(second).map((r) => [new URL(r.url).pathname, r]));
    assert.deepEqual([...after.keys()].sort(), [...PATHS].sort(), 'every page, none lost');
    for (const path of PATHS) {
      const r = after.get(path);
      if (path === '/b') {
        assert.equal(r?.outcome, 'ok');
        assert.ok(r?.body?.includes('/b v2'));
      } else {
        assert.equal(r?.outcome, 'not-modified', path);
        assert.equal(r?.body, null);
        assert.equal(r?.previousCaptureId, before.get(path)?.captureId);
      }
    }
    assert.equal(site.count({ conditional: true }), PATHS.length, 'every page asked with its validators');
  });
});
