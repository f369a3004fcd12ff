import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCrawlSettings } from '../../shared/crawl-settings/index.js';
import { settingFromText } from '../../shared/crawl-settings/text-input.js';
import { InvalidInputError } from '../../shared/errors.js';
import { crawlScopeOf } from '../../shared/url/crawl-scope.js';
import { compileUrlPattern, createUrlFilter, urlPatternProblem } from '../../shared/url/url-patterns.js';

test('a pattern is found anywhere in the URL unless anchored, case and all', () => {
  const blog = compileUrlPattern('/blog/');
  assert.equal(blog.test('https://a.test/blog/1'), true);
  assert.equal(blog.test('https://a.test/en/blog/'), true);
  assert.equal(blog.test('https://a.test/Blog/1'), false);
  assert.equal(compileUrlPattern('(?i)/blog/').test('https://a.test/BLOG/1'), true);
  assert.equal(compileUrlPattern('\\.pdf$').test('https://a.test/x.pdf?v=1'), false);
  assert.equal(compileUrlPattern('^https://a\\.test/').test('https://b.test/?u=https://a.test/'), false);
});

test('patterns a backtracking engine would take exponential time on run in linear time', () => {
  // With V8's own engine this test would not end: RE2 answers at once.
  const evil = compileUrlPattern('^(a+)+$');
  assert.equal(evil.test(`https://a.test/${'a'.repeat(5_000)}!`), false);
  assert.equal(compileUrlPattern('(x+x+)+y').test('x'.repeat(5_000)), false);
});

test('what RE2 does not take is a typed URL_PATTERN_INVALID with its reason', () => {
  for (const [pattern, reason] of [
    ['(?<=a)b', /RE2/],
    ['(a', /missing \)/],
    ['(a)\\1', /RE2/],
    ['', /1 to 1000 characters/],
    ['x'.repeat(1_001), /1 to 1000 characters/],
  ] as const) {
    assert.throws(
      () => compileUrlPattern(pattern),
      (err: unknown) =>
        err instanceof InvalidInputError && err.code === 'URL_PATTERN_INVALID' && reason.test(err.message),
      pattern,
    );
    assert.match(urlPatternProblem(pattern) ?? '', reason);
  }
  assert.equal(urlPatternProblem('[?&]sessionid='), null);
});

test('a filter: excludes first, then one include must match; none at all is no filter', () => {
  assert.equal(createUrlFilter([], []), null);
  const filter = createUrlFilter(['/blog/', '/news/'], ['[?&]sessionid=']);
  assert.ok(filter);
  assert.equal(filter.problem('https://a.test/blog/1'), null);
  assert.equal(filter.problem('https://a.test/news/1'), null);
  assert.equal(filter.admits('https://a.test/news/1'), true);
  assert.equal(filter.admits('https://a.test/news/1?sessionid=2'), false);
  assert.equal(filter.admits('https://a.test/shop/1'), false);
  assert.equal(
    filter.problem('https://a.test/blog/1?sessionid=2'),
    'excluded: matches the excludeUrls pattern "[?&]sessionid="',
  );
  assert.equal(
    filter.problem('https://a.test/shop/1'),
    'not included: matches none of the includeUrls patterns ("/blog/", "/news/")',
  );
  const excludeOnly = createUrlFilter([], ['/private/']);
  assert.equal(excludeOnly?.problem('https://a.test/x'), null);
  assert.equal(excludeOnly?.admits('https://a.test/private/x'), false);
  // A pattern's own alternation and flags stay its own once the list is joined.
  const joined = createUrlFilter([], ['(?i)/A/|/b/', '/d/$']);
  assert.equal(joined?.admits('https://x.test/a/'), false);
  assert.equal(joined?.admits('https://x.test/B/'), false, '(?i) covers its whole pattern');
  assert.equal(joined?.admits('https://x.test/d/'), false);
  assert.equal(joined?.admits('https://x.test/d/e'), true, 'the $ of the second pattern is its own');
  assert.equal(joined?.admits('https://x.test/D/'), true, '(?i) does not reach the next pattern');
});

test('the crawl scope: hosts first, then patterns; old settings without patterns keep their scope', () => {
  const scope = crawlScopeOf({
    scope: 'host',
    seeds: ['https://a.test/'],
    includeUrls: ['/blog/'],
    excludeUrls: ['/drafts/'],
  });
  assert.equal(scope.inScope('https://a.test/blog/1'), true);
  assert.equal(scope.inScope('https://b.test/blog/1'), false);
  assert.equal(scope.inScope('https://a.test/blog/drafts/1'), false);
  assert.match(scope.problem('https://b.test/blog/1') ?? '', /^out of scope: scope "host"/);
  assert.match(scope.problem('https://a.test/blog/drafts/1') ?? '', /^excluded/);
  assert.equal(scope.problem('https://a.test/blog/1'), null);
  const old = crawlScopeOf({ scope: 'host', seeds: ['https://a.test/'] });
  assert.equal(old.inScope('https://a.test/anything'), true);
  assert.equal(crawlScopeOf({ scope: 'any', seeds: [] }).inScope('https://a.test/'), false);
});

test('the settings check every pattern once, and report a bad one by its place', () => {
  const settings = parseCrawlSettings({ seeds: ['https://a.test/'], includeUrls: ['/blog/'] });
  assert.deepEqual(settings.includeUrls, ['/blog/']);
  assert.deepEqual(settings.excludeUrls, []);
  assert.throws(
    () => parseCrawlSettings({ seeds: ['https://a.test/'], excludeUrls: ['ok', '(?<=a)b'] }),
    (err: unknown) => err instanceof Error && /excludeUrls\.1/.test(err.message) && /RE2/.test(err.message),
  );
  assert.throws(() => parseCrawlSettings({ seeds: ['https://a.test/'], includeUrls: Array(101).fill('x') }));
});

test('as text (ACKCRAWL_INCLUDE_URLS, config files), one pattern per line: commas and spaces are theirs', () => {
  assert.deepEqual(settingFromText('includeUrls', '/a{1,3}/\n  /b c/ \n\n'), ['/a{1,3}/', '/b c/']);
  assert.deepEqual(settingFromText('excludeUrls', '[?&]sessionid='), ['[?&]sessionid=']);
});
