import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromiumProblem, DEFAULT_CHROMIUM_PATH } from '../../shared/config/chromium.js';
import { JS_LINKS, startDynamicSite, type DynamicSite } from '../fixtures/dynamic-site.js';
import { runCli } from '../helpers/cli.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { requireKafka } from '../helpers/services.js';
import { readPageRecords } from '../helpers/topic-records.js';

describe('rendering in the distributed crawl (RabbitMQ, Kafka)', () => {
  let site: DynamicSite;
  let cluster: Cluster;

  before(async () => {
    assert.equal(chromiumProblem(DEFAULT_CHROMIUM_PATH), null);
    await requireKafka();
    site = await startDynamicSite();
    // One static and one render crawler: render tasks must find the render one.
    cluster = await startCluster({ agents: 1, processes: 1, renderProcesses: 1 });
  });
  after(async () => {
    await cluster?.stop();
    await site?.close();
  });

  test('crawl --cluster --render finds the JS-written links; records in Kafka hold the rendered DOM', async () => {
    const result = await runCli(
      ['crawl', '--cluster', `${site.origin}/`, '--allow-private', '--render', '--host-delay', '0', '--json'],
      cluster.env,
    );
    assert.equal(result.code, 0, result.stderr);
    const records = await readPageRecords(cluster.topic, (r) => new Set(r.map((x) => x.url)).size >= 4);
    const byPath = new Map(records.map((r) => [new URL(r.url).pathname, r]));
    assert.deepEqual([...byPath.keys()].sort(), ['/', '/js-a', '/js-b', '/static']);
    for (const path of JS_LINKS) assert.ok(site.paths().includes(path), `${path} was requested`);
    const home = byPath.get('/');
    assert.equal(home?.rendered, true);
    assert.match(home?.body ?? '', /<a href="\/js-a">/);
    assert.ok(
      records.every((r) => r.rendered === true && r.crawlerId.includes('-render-')),
      'every page went to the render crawler',
    );
  });
});
