import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHostMatcher, hostPatternSchema } from '../../shared/url/host-patterns.js';

test('host patterns: exact names on any port, subdomain wildcards, ports, IPv6', () => {
  const match = createHostMatcher(['Example.com', '*.js.test', '127.0.0.1:8080', '[::1]']);
  assert.equal(match('example.com'), true);
  assert.equal(match('example.com:8443'), true, 'no port in the pattern: any port');
  assert.equal(match('www.example.com'), false, 'an exact name is not its subdomains');
  assert.equal(match('a.js.test'), true);
  assert.equal(match('a.b.js.test:81'), true);
  assert.equal(match('js.test'), false, 'a wildcard is only subdomains');
  assert.equal(match('notjs.test'), false);
  assert.equal(match('127.0.0.1:8080'), true);
  assert.equal(match('127.0.0.1:8081'), false);
  assert.equal(match('127.0.0.1'), false);
  assert.equal(match('[::1]:3000'), true);
  assert.equal(createHostMatcher([])('example.com'), false);
});

test('host patterns: URLs, paths and stray wildcards are refused', () => {
  for (const ok of ['example.com', '*.example.com', 'localhost:8080', '[::1]:80', 'xn--bcher-kva.example']) {
    assert.ok(hostPatternSchema.safeParse(ok).success, ok);
  }
  for (const bad of [
    'http://example.com/',
    'example.com/path',
    '*example.com',
    'a.*.com',
    '',
    'exa mple.com',
  ]) {
    assert.ok(!hostPatternSchema.safeParse(bad).success, bad);
  }
});
