import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planCrawl, type RawCrawlOptions } from '../../master/cli/crawl-options.js';

const RAW: RawCrawlOptions = { out: '/tmp/unused', processes: '2', concurrency: '32' };
const plan = (extra: Partial<RawCrawlOptions>) =>
  planCrawl(['http://127.0.0.1/'], { ...RAW, ...extra }, { needsOutDir: false });

test('--max-url-length and --max-links-per-page default to 2048 and 5000', () => {
  const p = plan({});
  assert.equal(p.settings.maxUrlLength, 2048);
  assert.equal(p.settings.maxLinksPerPage, 5000);
  const q = plan({ maxUrlLength: '300', maxLinksPerPage: '7' });
  assert.equal(q.settings.maxUrlLength, 300);
  assert.equal(q.settings.maxLinksPerPage, 7);
});

test('link limits out of range are reported with the other option problems', () => {
  assert.throws(
    () => plan({ maxUrlLength: '9000', maxLinksPerPage: '0' }),
    (err: Error) =>
      /--max-url-length: .*<=8192/.test(err.message) && /--max-links-per-page: .*>=1/.test(err.message),
  );
  assert.throws(() => plan({ maxLinksPerPage: '100001' }), /--max-links-per-page: .*<=100000/);
});
