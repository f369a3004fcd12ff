import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startPolitenessSite } from '../fixtures/politeness-site.js';
import { startCli } from '../helpers/cli.js';
import { startCluster } from '../helpers/cluster.js';
import { checkPoliteness, politenessArgs, POLITENESS_HOSTS } from '../helpers/politeness-checks.js';
import { readPageRecords } from '../helpers/topic-records.js';

describe('the distributed crawl: politeness across the fleet', () => {
  test('2 agents × 2 crawlers keep every per-host limit, checked at the servers', async () => {
    const site = await startPolitenessSite(POLITENESS_HOSTS);
    const cluster = await startCluster({ agents: 2, processes: 2 });
    try {
      const run = startCli(['crawl', '--cluster', ...politenessArgs(site)], cluster.env);
      cluster.onStop(() => {
        if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
      });
      const result = await run.done;
      assert.equal(result.code, 0, result.stderr);
      const pages = POLITENESS_HOSTS.reduce((n, h) => n + h.pages + 1, 0);
      const records = await readPageRecords(cluster.topic, (r) => new Set(r.map((x) => x.url)).size >= pages);
      assert.ok(records.every((r) => r.outcome === 'ok'));
      const crawlers = new Set(records.map((r) => r.crawlerId));
      assert.ok(crawlers.size >= 4, `pages came from ${crawlers.size} crawler processes`);
      await checkPoliteness(site);
    } finally {
      await cluster.stop();
      await site.close();
    }
  });
});
