import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromiumProblem, DEFAULT_CHROMIUM_PATH } from '../../shared/config/chromium.js';
import { pageRecordSchema } from '../../shared/protocol/page-record.js';
import { runCli } from '../helpers/cli.js';
import { readRecords } from '../helpers/records.js';
import { JS_LINKS, startDynamicSite, type DynamicSite } from '../fixtures/dynamic-site.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'ackcrawl-render-'));

/** Crawls the dynamic site's home page and what it links to; returns the records by path. */
async function crawl(site: DynamicSite, out: string, extra: string[]) {
  const result = await runCli([
    'crawl',
    `${site.origin}/`,
    '--out',
    out,
    '--allow-private',
    '--host-delay',
    '0',
    '--json',
    ...extra,
  ]);
  assert.equal(result.code, 0, result.stderr);
  return new Map(readRecords(out).map((r) => [new URL(r.url).pathname, r]));
}

describe('ackcrawl crawl with rendering, embedded, against a page whose links JavaScript writes', () => {
  const outs: string[] = [];
  after(() => {
    for (const out of outs) rmSync(out, { recursive: true, force: true });
  });
  before(() => {
    // CI installs chromium (scripts/services.sh up): a missing browser fails these tests loudly.
    assert.equal(chromiumProblem(DEFAULT_CHROMIUM_PATH), null);
  });

  for (const [name, flags] of [
    ['--render', ['--render']],
    ['--render-host 127.0.0.1', ['--render-host', '127.0.0.1']],
  ] as const) {
    test(`${name}: the JS-written links are found and fetched, and the record holds the rendered DOM`, async () => {
      const site = await startDynamicSite();
      const out = tmp();
      outs.push(out);
      try {
        const records = await crawl(site, out, [...flags]);
        for (const path of JS_LINKS) {
          assert.ok(site.paths().includes(path), `${path} was requested from the server`);
          assert.equal(records.get(path)?.outcome, 'ok', `${path} has a record`);
        }
        const home = records.get('/');
        assert.ok(home);
        assert.equal(home.rendered, true);
        assert.match(home.body ?? '', /<a href="\/js-a">js \/js-a<\/a>/);
        assert.deepEqual(
          home.links,
          ['/static', ...JS_LINKS].map((p) => `${site.origin}${p}`),
        );
        assert.deepEqual([...records.keys()].sort(), ['/', '/js-a', '/js-b', '/static']);
        for (const record of records.values()) {
          const parsed = pageRecordSchema.safeParse(record);
          assert.ok(parsed.success, `${record.url}: ${JSON.stringify(parsed.error?.issues[0])}`);
        }
      } finally {
        await site.close();
      }
    });
  }

  for (const [name, flags] of [
    ['without rendering', []],
    ['rendering another host', ['--render-host', '*.example.com']],
  ] as const) {
    test(`${name}: the JS-written links are never seen`, async () => {
      const site = await startDynamicSite();
      const out = tmp();
      outs.push(out);
      try {
        const records = await crawl(site, out, [...flags]);
        for (const path of JS_LINKS) assert.ok(!site.paths().includes(path), `${path} must not be requested`);
        assert.ok(!site.paths().includes('/api/links'), 'no script ran');
        assert.deepEqual([...records.keys()].sort(), ['/', '/static']);
        assert.equal(records.get('/')?.rendered, undefined);
      } finally {
        await site.close();
      }
    });
  }

  test('without Chromium, a rendering crawl stops at once and says how to install it', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1:9/', '--render', '--out', tmp()], {
      ACKCRAWL_CHROMIUM_PATH: '/nonexistent/chromium',
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /rendering needs Chromium at \/nonexistent\/chromium.*apt-get install chromium/);
  });

  test('a bad --render-host is refused with a clear error', async () => {
    const r = await runCli(['crawl', 'http://127.0.0.1/', '--render-host', 'http://x/', '--out', tmp()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--render-host 'http:\/\/x\/'/);
  });
});
