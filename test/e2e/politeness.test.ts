import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startPolitenessSite } from '../fixtures/politeness-site.js';
import { runCli } from '../helpers/cli.js';
import { checkPoliteness, politenessArgs, POLITENESS_HOSTS } from '../helpers/politeness-checks.js';
import { readRecords } from '../helpers/records.js';

describe('embedded crawl: politeness with 4 crawler processes', () => {
  test('per-host limits, host rules, Retry-After and no head-of-line blocking, checked at the servers', async () => {
    const site = await startPolitenessSite(POLITENESS_HOSTS);
    const out = mkdtempSync(join(tmpdir(), 'ackcrawl-politeness-'));
    try {
      const result = await runCli(
        ['crawl', ...politenessArgs(site), '--out', out, '--processes', '4', '--concurrency', '16'],
        {},
        120_000,
      );
      assert.equal(result.code, 0, result.stderr);
      const records = readRecords(out);
      const pages = POLITENESS_HOSTS.reduce((n, h) => n + h.pages + 1, 0);
      assert.equal(records.length, pages);
      assert.ok(records.every((r) => r.outcome === 'ok'));
      const crawlers = new Set(records.map((r) => r.crawlerId));
      assert.ok(crawlers.size >= 4, `pages came from ${crawlers.size} crawler processes`);
      await checkPoliteness(site);
    } finally {
      await site.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
