import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isRobotsMetaName, parseRobotsDirectives } from '../../client/crawler/parse/meta-robots.js';

test('robots meta names: robots and ackcrawl, case-insensitive, trimmed', () => {
  for (const name of ['robots', 'ROBOTS', ' Robots ', 'ackcrawl', 'AckCrawl']) {
    assert.equal(isRobotsMetaName(name), true, name);
  }
  for (const name of ['googlebot', 'robot', 'robots-txt', '', 'description']) {
    assert.equal(isRobotsMetaName(name), false, name);
  }
});

test('directives: comma or space separated, case-insensitive; none is noindex and nofollow', () => {
  const cases: [string, { noindex: boolean; nofollow: boolean }][] = [
    ['nofollow', { noindex: false, nofollow: true }],
    ['NOFOLLOW, noindex', { noindex: true, nofollow: true }],
    ['noindex,nofollow', { noindex: true, nofollow: true }],
    ['noindex nofollow', { noindex: true, nofollow: true }],
    ['none', { noindex: true, nofollow: true }],
    [' None ', { noindex: true, nofollow: true }],
    ['noindex', { noindex: true, nofollow: false }],
    ['index, follow', { noindex: false, nofollow: false }],
    ['all', { noindex: false, nofollow: false }],
    ['nofollowing, no-follow, max-snippet:-1', { noindex: false, nofollow: false }],
    ['', { noindex: false, nofollow: false }],
  ];
  for (const [content, expected] of cases) {
    assert.deepEqual(parseRobotsDirectives(content), expected, content);
  }
});
