import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidInputError } from '../../shared/errors.js';
import { createScope, registrableDomain, type ScopeMode } from '../../shared/url/scope.js';

function assertScope(scope: (url: string) => boolean, inside: string[], outside: string[]): void {
  for (const url of inside) assert.equal(scope(url), true, `${url} should be in scope`);
  for (const url of outside) assert.equal(scope(url), false, `${url} should be out of scope`);
}

const NOT_HTTP = [
  'mailto:a@example.com',
  'ftp://example.com/',
  'javascript:void(0)',
  'not a url',
  '',
  '/relative',
];

test("'host' mode: same hostname and port as a seed, any scheme", () => {
  const scope = createScope('host', ['https://www.example.com/start', 'http://Other.example:8080/']);
  assertScope(
    scope,
    [
      'https://www.example.com/',
      'http://www.example.com/deep/page?q=1',
      'https://WWW.EXAMPLE.COM:443/x',
      'https://www.example.com./trailing-dot',
      'http://other.example:8080/x',
      'https://user:pw@www.example.com/',
    ],
    [
      'https://example.com/',
      'https://sub.www.example.com/',
      'https://www.example.com:8443/',
      'http://other.example/',
      'http://other.example:8081/',
      'https://www.example.org/',
      ...NOT_HTTP,
    ],
  );
});

test("'host' mode: IP and IPv6 seeds, localhost and IDN", () => {
  const scope = createScope('host', ['http://127.0.0.1:3000/', 'http://[::1]/', 'http://bücher.example/']);
  assertScope(
    scope,
    [
      'http://127.0.0.1:3000/a',
      'http://[::1]:80/x',
      'https://xn--bcher-kva.example/',
      'http://BÜCHER.example/',
    ],
    ['http://127.0.0.1/', 'http://127.0.0.2:3000/', 'http://[::2]/', 'http://localhost:3000/'],
  );
});

test("'domain' mode: same registrable domain as a seed, port ignored", () => {
  const scope = createScope('domain', ['https://www.example.co.uk/', 'http://blog.example.com/']);
  assertScope(
    scope,
    [
      'https://example.co.uk/',
      'http://a.b.c.example.co.uk:8080/x',
      'https://shop.example.co.uk./',
      'https://example.com/',
      'https://static.example.com/img.png',
    ],
    [
      'https://other.co.uk/',
      'https://co.uk/',
      'https://example.co.uk.evil.com/',
      'https://notexample.com/',
      'https://example.org/',
      'https://example.com.au/',
      ...NOT_HTTP,
    ],
  );
});

test("'domain' mode: private public suffixes make each user site its own domain", () => {
  const scope = createScope('domain', ['https://alice.github.io/blog/']);
  assertScope(
    scope,
    ['https://alice.github.io/', 'https://www.alice.github.io/x'],
    ['https://bob.github.io/', 'https://github.io/', 'https://github.com/alice'],
  );
});

test("'domain' mode: IP addresses, localhost and single-label hosts are their own domain", () => {
  const scope = createScope('domain', [
    'http://192.168.1.10:8080/',
    'http://localhost:3000/',
    'http://[::1]/',
  ]);
  assertScope(
    scope,
    ['http://192.168.1.10/', 'http://192.168.1.10:9999/x', 'http://localhost/', 'http://[::1]:8080/'],
    [
      'http://192.168.1.11/',
      'http://10.192.168.1.10/',
      'http://foo.localhost/',
      'http://[::2]/',
      'http://intranet/',
    ],
  );
  assert.equal(registrableDomain('192.168.1.10'), '192.168.1.10');
  assert.equal(registrableDomain('localhost'), 'localhost');
  assert.equal(registrableDomain('[::1]'), '[::1]');
  assert.equal(registrableDomain('www.example.co.uk'), 'example.co.uk');
  assert.equal(registrableDomain('co.uk'), 'co.uk');
});

test("'domain' mode: a host under a seed domain that is a separate registrable domain is out", () => {
  // s3.amazonaws.com is a (private) public suffix, so bucket.s3.amazonaws.com is not amazonaws.com's.
  const scope = createScope('domain', ['https://amazonaws.com/']);
  assertScope(scope, ['https://aws.amazonaws.com/'], ['https://bucket.s3.amazonaws.com/']);
});

test("'any' mode: every http(s) URL; seeds optional", () => {
  const scope = createScope('any', []);
  assertScope(
    scope,
    ['http://example.com/', 'https://anything.example.org:8443/x', 'HTTPS://UPPER.example/'],
    NOT_HTTP,
  );
  assertScope(createScope('any', ['https://seed.example/']), ['https://elsewhere.example/'], NOT_HTTP);
});

test('invalid seeds, no seeds and unknown modes are rejected when the scope is created', () => {
  assert.throws(() => createScope('host', ['not a url']), { code: 'URL_INVALID' });
  assert.throws(() => createScope('domain', ['ftp://example.com/']), { code: 'URL_UNSUPPORTED_SCHEME' });
  assert.throws(() => createScope('any', ['mailto:x@example.com']), { code: 'URL_UNSUPPORTED_SCHEME' });
  for (const mode of ['host', 'domain'] as const) {
    assert.throws(
      () => createScope(mode, []),
      (err: unknown) => err instanceof InvalidInputError && err.code === 'SCOPE_NO_SEEDS',
    );
  }
  assert.throws(() => createScope('site' as ScopeMode, ['https://example.com/']), {
    code: 'SCOPE_MODE_INVALID',
    message: /unknown scope mode "site": use one of host, domain, any/,
  });
});
