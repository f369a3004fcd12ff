import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withNavigations } from '../../client/crawler/page/navigation-links.js';
import { extractLinks } from '../../client/crawler/parse/link-extractor.js';

const PAGE = 'https://a.test/page';
const limits = { maxUrlLength: 2_048, maxLinks: 5_000 };

test('navigations come after the DOM’s links, normalised, once each; the first is the navigationUrl', () => {
  const dom = extractLinks('<a href="/x">x</a><a href="/y" rel="nofollow">y</a>', PAGE);
  const out = withNavigations(
    dom,
    ['https://A.test/next#frag', 'https://a.test/x', 'https://b.test/'],
    PAGE,
    limits,
  );
  assert.deepEqual(out.links, [
    'https://a.test/x',
    'https://a.test/y',
    'https://a.test/next',
    'https://b.test/',
  ]);
  assert.deepEqual(out.follow, ['https://a.test/x', 'https://a.test/next', 'https://b.test/']);
  assert.equal(out.navigationUrl, 'https://a.test/next');
  assert.deepEqual(dom.links, ['https://a.test/x', 'https://a.test/y'], 'the DOM’s links are not changed');
});

test('a navigation to a nofollow link of the DOM is followed: the script goes there', () => {
  const dom = extractLinks('<a href="/y" rel="nofollow">y</a>', PAGE);
  const out = withNavigations(dom, ['https://a.test/y'], PAGE, limits);
  assert.deepEqual(out.links, ['https://a.test/y']);
  assert.deepEqual(out.follow, ['https://a.test/y']);
  assert.equal(out.navigationUrl, 'https://a.test/y');
});

test('the page itself, other schemes and unparsable targets are no links', () => {
  const dom = extractLinks('', PAGE);
  const out = withNavigations(
    dom,
    ['https://a.test/page#again', 'ftp://a.test/f', 'http://[bad'],
    PAGE,
    limits,
  );
  assert.deepEqual(out.links, []);
  assert.deepEqual(out.follow, []);
  assert.equal(out.navigationUrl, null);
});

test('a robots meta nofollow records the target but does not follow it', () => {
  const dom = extractLinks('<meta name="robots" content="nofollow"><a href="/x">x</a>', PAGE);
  const out = withNavigations(dom, ['https://a.test/next'], PAGE, limits);
  assert.deepEqual(out.links, ['https://a.test/x', 'https://a.test/next']);
  assert.deepEqual(out.follow, []);
  assert.equal(out.navigationUrl, 'https://a.test/next');
});

test('the soft limits count what they drop, as for the DOM’s links', () => {
  const dom = extractLinks('<a href="/x">x</a>', PAGE, { maxLinks: 1 });
  const long = `https://a.test/${'l'.repeat(100)}`;
  const out = withNavigations(dom, [long, 'https://a.test/z', 'https://a.test/x'], PAGE, {
    maxUrlLength: 50,
    maxLinks: 1,
  });
  assert.deepEqual(out.links, ['https://a.test/x']);
  assert.deepEqual(out.dropped, { tooLong: 1, overLimit: 1 });
  assert.equal(out.navigationUrl, 'https://a.test/x', 'a target the DOM links already is kept');
});
