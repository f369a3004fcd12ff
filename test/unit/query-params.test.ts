import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import { createQueryStripper } from '../../shared/url/query-params.js';

test('listed parameters go, in any case; a trailing * is a prefix; the rest keeps its order', () => {
  const strip = createQueryStripper(['utm_*', 'sessionid', 'fbclid']);
  assert.ok(strip);
  assert.equal(strip('https://a.test/p?utm_source=x&utm_medium=y'), 'https://a.test/p');
  assert.equal(strip('https://a.test/p?b=2&SESSIONID=abc&a=1'), 'https://a.test/p?b=2&a=1');
  assert.equal(strip('https://a.test/p?id=2&fbclid=z&UTM_Campaign=q'), 'https://a.test/p?id=2');
  assert.equal(strip('https://a.test/p?flag&utm_x'), 'https://a.test/p?flag', 'names without a value too');
  assert.equal(strip('https://a.test/p?utmost=1&sessionids=2'), 'https://a.test/p?utmost=1&sessionids=2');
  const same = 'https://a.test/p?q=1';
  assert.equal(strip(same), same);
  assert.equal(
    strip('https://a.test/utm_source=1'),
    'https://a.test/utm_source=1',
    'the path is not the query',
  );
  assert.equal(createQueryStripper([]), null);
});

test('path parameters of the listed names go from every segment; others stay', () => {
  const strip = createQueryStripper(['jsessionid', 'utm_*']);
  assert.ok(strip);
  assert.equal(strip('https://a.test/shop;jsessionid=A1B2'), 'https://a.test/shop');
  assert.equal(strip('https://a.test/shop;JSESSIONID=A1?x=1'), 'https://a.test/shop?x=1');
  assert.equal(strip('https://a.test/shop;jsessionid=A1?utm_source=z'), 'https://a.test/shop');
  assert.equal(
    strip('https://a.test/a;v=2;jsessionid=A1/b;jsessionid=A1;lang=en/c?q=1&utm_x=2'),
    'https://a.test/a;v=2/b;lang=en/c?q=1',
  );
  const kept = 'https://a.test/a;v=2/b;lang=en?q=1';
  assert.equal(strip(kept), kept);
  assert.equal(
    strip('https://a.test/p?q=a;jsessionid=1'),
    'https://a.test/p?q=a;jsessionid=1',
    'not in the query',
  );
  assert.equal(strip('https://a.test/;jsessionid=1'), 'https://a.test/');
});

test('the settings take names, each with an optional trailing *, and refuse the rest by place', () => {
  assert.deepEqual(
    parseCrawlSettings({ seeds: ['https://a.test/'], stripQueryParams: ['utm_*', 'gclid'] }).stripQueryParams,
    ['utm_*', 'gclid'],
  );
  for (const bad of ['a=b', 'a&b', '*', 'u*m', 'with space', '']) {
    assert.throws(
      () => parseCrawlSettings({ seeds: ['https://a.test/'], stripQueryParams: ['ok', bad] }),
      /stripQueryParams\.1/,
      JSON.stringify(bad),
    );
  }
});
