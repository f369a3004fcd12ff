import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PageRecord } from '../../shared/protocol/page-record.js';
import { startCli } from '../helpers/cli.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { identityArgs, PAGES, startProxyFixture, type ProxyFixture } from '../helpers/proxy-fixture.js';
import { readPageRecords } from '../helpers/topic-records.js';

describe('proxies and User-Agent rotation in the distributed crawl', () => {
  let fixture: ProxyFixture;
  let cluster: Cluster;
  before(async () => {
    fixture = await startProxyFixture();
    cluster = await startCluster({ agents: 1, processes: 2 });
  });
  after(async () => {
    await cluster.stop();
    await fixture.close();
  });

  test('crawl --cluster --proxy --user-agent: the same routing, rotation and secrecy as embedded', async () => {
    const args = ['crawl', '--cluster', ...fixture.seeds(), '--allow-private', ...identityArgs(fixture)];
    args.push('--host-delay', '0', '--host-concurrency', '4', '--retry-delay', '100', '--json');
    const run = startCli(args, cluster.env);
    cluster.onStop(() => {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
    });
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    const total = fixture.sites.length * PAGES.length;
    const records: PageRecord[] = await readPageRecords(
      cluster.topic,
      (r) => new Set(r.map((x) => x.url)).size >= total,
    );
    // Two crawler processes, each with its own pool, agree on every host's proxy (rendezvous).
    fixture.check(records, result.stdout + result.stderr);
  });
});
