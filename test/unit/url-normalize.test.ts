import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidInputError } from '../../shared/errors.js';
import { hostOf, MAX_URL_LENGTH, normalizeUrl, tryNormalizeUrl } from '../../shared/url/normalize.js';
import { normalizePercentEncoding } from '../../shared/url/percent-encoding.js';

/** [input, expected] or [input, base, expected]. */
type Case = [string, string] | [string, string, string];

function check(cases: Case[]): void {
  for (const entry of cases) {
    const [input, base, expected] = entry.length === 2 ? [entry[0], undefined, entry[1]] : entry;
    const label = `${JSON.stringify(input)}${base === undefined ? '' : ` against ${base}`}`;
    assert.equal(normalizeUrl(input, base), expected, label);
    assert.equal(tryNormalizeUrl(input, base), expected, label);
    // Canonical means a fixed point: normalising the result changes nothing.
    assert.equal(normalizeUrl(expected), expected, `${label} is not idempotent`);
  }
}

function assertRejected(input: string, code: string, base?: string): InvalidInputError {
  let caught: unknown;
  try {
    normalizeUrl(input, base);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof InvalidInputError, `${JSON.stringify(input)} was accepted`);
  assert.equal(caught.code, code, `${JSON.stringify(input)}: ${caught.message}`);
  assert.equal(caught.retriable, false);
  assert.equal(tryNormalizeUrl(input, base), null, `tryNormalizeUrl(${JSON.stringify(input)})`);
  return caught;
}

test('scheme and host are lower-cased; path and query keep their case', () => {
  check([
    ['HTTP://EXAMPLE.COM/Path/CASE?Q=Value', 'http://example.com/Path/CASE?Q=Value'],
    ['HtTpS://Sub.Example.Com', 'https://sub.example.com/'],
  ]);
});

test('default ports are removed, others kept', () => {
  check([
    ['http://example.com:80/a', 'http://example.com/a'],
    ['https://example.com:443/a', 'https://example.com/a'],
    ['http://example.com:443/a', 'http://example.com:443/a'],
    ['https://example.com:80/a', 'https://example.com:80/a'],
    ['https://example.com:8443/', 'https://example.com:8443/'],
    ['http://example.com:/a', 'http://example.com/a'],
    ['http://example.com:0080/a', 'http://example.com/a'],
  ]);
});

test('an empty path becomes / and dot segments are resolved, also percent-encoded ones', () => {
  check([
    ['http://example.com', 'http://example.com/'],
    ['http://example.com?q=1', 'http://example.com/?q=1'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/../../a', 'http://example.com/a'],
    ['http://example.com/a/b/..', 'http://example.com/a/'],
    ['http://example.com/a/%2E%2E/b', 'http://example.com/b'],
    ['http://example.com/a/%2e/b', 'http://example.com/a/b'],
    ['http://example.com/a/.%2E/b', 'http://example.com/b'],
    // Not dot segments: kept.
    ['http://example.com/a/..b/c.', 'http://example.com/a/..b/c.'],
    ['http://example.com/a//b', 'http://example.com/a//b'],
    // Backslashes are slashes in http(s) URLs, as in browsers.
    ['http://example.com\\a\\b', 'http://example.com/a/b'],
  ]);
});

test('the fragment is removed, including an empty one', () => {
  check([
    ['http://example.com/a#section', 'http://example.com/a'],
    ['http://example.com/a?q=1#frag', 'http://example.com/a?q=1'],
    ['http://example.com/#', 'http://example.com/'],
    ['http://example.com/a#b#c', 'http://example.com/a'],
  ]);
});

test('a ? with an empty query is removed, a non-empty query is kept in order', () => {
  check([
    ['http://example.com/?', 'http://example.com/'],
    ['http://example.com/a?#x', 'http://example.com/a'],
    ['http://example.com/a?b?', 'http://example.com/a?b?'],
    ['http://example.com/a?=', 'http://example.com/a?='],
    ['http://example.com/a?&', 'http://example.com/a?&'],
    ['http://example.com/?z=1&a=2&m=3', 'http://example.com/?z=1&a=2&m=3'],
    ['http://example.com/?a=1&a=2', 'http://example.com/?a=1&a=2'],
    ['http://example.com/?q=a+b', 'http://example.com/?q=a+b'],
  ]);
});

test('escapes of unreserved characters are decoded in path and query', () => {
  check([
    ['http://example.com/%7Euser/', 'http://example.com/~user/'],
    ['http://example.com/%7euser/', 'http://example.com/~user/'],
    ['http://example.com/%41%42c%2D%2E%5F%7E%30%39', 'http://example.com/ABc-._~09'],
    ['http://example.com/?q=%61%62&%5F=%7e', 'http://example.com/?q=ab&_=~'],
  ]);
});

test('escapes of reserved and other characters are kept, with upper-case hex digits', () => {
  check([
    ['http://example.com/a%2fb', 'http://example.com/a%2Fb'],
    ['http://example.com/a%2Fb%3f%23%26%3D', 'http://example.com/a%2Fb%3F%23%26%3D'],
    ['http://example.com/?a=%26&b=%3d&c=%2b&d=%23', 'http://example.com/?a=%26&b=%3D&c=%2B&d=%23'],
    ['http://example.com/%e2%82%ac', 'http://example.com/%E2%82%AC'],
    ['http://example.com/%20%25', 'http://example.com/%20%25'],
  ]);
});

test('a % that starts no valid escape is left alone', () => {
  check([
    ['http://example.com/100%', 'http://example.com/100%'],
    ['http://example.com/%zz%4', 'http://example.com/%zz%4'],
    ['http://example.com/%%41', 'http://example.com/%A'],
    ['http://example.com/?p=50%&q=%g1', 'http://example.com/?p=50%&q=%g1'],
  ]);
});

test('characters that must be escaped are escaped (UTF-8, upper-case hex)', () => {
  check([
    ['http://example.com/ü/ñ?q=日本', 'http://example.com/%C3%BC/%C3%B1?q=%E6%97%A5%E6%9C%AC'],
    ['http://example.com/a b?c d', 'http://example.com/a%20b?c%20d'],
    ['http://example.com/"<>`{}', 'http://example.com/%22%3C%3E%60%7B%7D'],
    ['http://example.com/😀', 'http://example.com/%F0%9F%98%80'],
  ]);
});

test('IDN hosts become punycode; hosts are case-folded', () => {
  check([
    ['http://bücher.example/', 'http://xn--bcher-kva.example/'],
    ['http://BÜCHER.example/', 'http://xn--bcher-kva.example/'],
    ['https://XN--BCHER-KVA.example/', 'https://xn--bcher-kva.example/'],
    ['http://例え.テスト/パス', 'http://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9'],
    ['http://%65xample.com/', 'http://example.com/'],
  ]);
});

test('a trailing dot on the hostname is removed', () => {
  check([
    ['http://example.com./x', 'http://example.com/x'],
    ['http://Example.COM.:8080/x', 'http://example.com:8080/x'],
    ['http://example.com../', 'http://example.com/'],
    ['http://1.2.3.4./', 'http://1.2.3.4/'],
  ]);
  assertRejected('http://./', 'URL_INVALID');
  assertRejected('http://.../', 'URL_INVALID');
});

test('IP hosts: IPv4 is canonicalised, IPv6 compressed and lower-cased', () => {
  check([
    ['http://127.0.0.1:8080/x', 'http://127.0.0.1:8080/x'],
    ['http://0x7f.1/', 'http://127.0.0.1/'],
    ['http://[::1]/', 'http://[::1]/'],
    ['http://[::1]:8080/x', 'http://[::1]:8080/x'],
    ['http://[2001:DB8:0:0:0:0:0:1]:80/', 'http://[2001:db8::1]/'],
  ]);
  assertRejected('http://[::1/', 'URL_INVALID');
});

test('userinfo is kept as written (escapes untouched), empty userinfo dropped', () => {
  check([
    ['http://user:Pa%73s@Example.com/%7e', 'http://user:Pa%73s@example.com/~'],
    ['http://user@example.com/', 'http://user@example.com/'],
    ['http://@example.com/', 'http://example.com/'],
    ['http://:@example.com/', 'http://example.com/'],
  ]);
});

test('leading and trailing spaces and control characters are trimmed; tabs and newlines dropped', () => {
  check([
    ['  http://example.com/a  ', 'http://example.com/a'],
    ['\n\t http://example.com/a\r\n', 'http://example.com/a'],
    ['http://exa\nmple.com/a\tb', 'http://example.com/ab'],
    ['\u0000http://example.com/\u001f', 'http://example.com/'],
  ]);
  // A no-break space is not URL whitespace (browsers do not trim it either).
  assertRejected('\u00a0http://example.com/', 'URL_INVALID');
  check([['http://example.com/\u00a0', 'http://example.com/%C2%A0']]);
});

test('relative references resolve against the base', () => {
  const base = 'http://example.com/dir/page.html?x=1#top';
  check([
    ['other.html', base, 'http://example.com/dir/other.html'],
    ['../up', base, 'http://example.com/up'],
    ['/abs', base, 'http://example.com/abs'],
    ['?q=2', base, 'http://example.com/dir/page.html?q=2'],
    ['#frag', base, 'http://example.com/dir/page.html?x=1'],
    ['', base, 'http://example.com/dir/page.html?x=1'],
    ['//cdn.example/lib.js', 'https://example.com/', 'https://cdn.example/lib.js'],
    ['https://other.example/', base, 'https://other.example/'],
    ['http:same-scheme', 'http://example.com/dir/', 'http://example.com/dir/same-scheme'],
    ['https:other-scheme', 'http://example.com/dir/', 'https://other-scheme/'],
    ['  ./a%7eb  ', base, 'http://example.com/dir/a~b'],
  ]);
  assertRejected('mailto:x@example.com', 'URL_UNSUPPORTED_SCHEME', base);
  assertRejected('x', 'URL_UNSUPPORTED_SCHEME', 'ftp://example.com/');
});

test('a relative URL without a base, junk and broken hosts are URL_INVALID', () => {
  for (const input of [
    '',
    '   ',
    '/path',
    'example.com',
    'not a url',
    'http://',
    'http:///',
    'http://exa mple.com/',
    'http://example.com:99999/',
    'http://example.com:port/',
    'http://ex<ample.com/',
    '://example.com',
  ]) {
    assertRejected(input, 'URL_INVALID');
  }
  assertRejected('x', 'URL_INVALID', 'not a base');
});

test('schemes other than http(s) are URL_UNSUPPORTED_SCHEME', () => {
  for (const input of [
    'ftp://example.com/',
    'mailto:someone@example.com',
    'javascript:alert(1)',
    'JavaScript:void(0)',
    'data:text/html,hi',
    'tel:+123',
    'file:///etc/passwd',
    'ws://example.com/',
    'wss://example.com/',
    'about:blank',
    'blob:http://example.com/uuid',
    'urn:isbn:123',
  ]) {
    assertRejected(input, 'URL_UNSUPPORTED_SCHEME');
  }
});

test('URLs over MAX_URL_LENGTH are URL_TOO_LONG, before or after normalisation', () => {
  const prefix = 'http://example.com/';
  const atLimit = prefix + 'a'.repeat(MAX_URL_LENGTH - prefix.length);
  assert.equal(normalizeUrl(atLimit), atLimit);
  assertRejected(atLimit + 'a', 'URL_TOO_LONG');
  // 3000 'ü' is 3019 characters of input but 18,019 once percent-encoded.
  assertRejected(prefix + 'ü'.repeat(3000), 'URL_TOO_LONG');
  // A relative reference that only gets too long once resolved.
  assertRejected('a'.repeat(MAX_URL_LENGTH - 5), 'URL_TOO_LONG', prefix);
});

test('error messages quote the input, cut to about 200 characters, and carry it in details', () => {
  const long = `mailto:${'x'.repeat(5000)}`;
  const err = assertRejected(long, 'URL_UNSUPPORTED_SCHEME');
  assert.match(err.message, /http: and https:/);
  assert.match(err.message, /"mailto:x+"… \(5007 characters\)/);
  assert.ok(err.message.length < 300, `message is ${err.message.length} characters`);
  assert.equal(err.details?.['input'], long.slice(0, 200));
  assert.equal(err.status, 400);

  const relative = assertRejected('../x', 'URL_INVALID');
  assert.match(relative.message, /not a valid absolute URL: "\.\.\/x"/);
  const withBase = assertRejected('x', 'URL_INVALID', 'garbage');
  assert.match(withBase.message, /against base "garbage"/);
  const control = assertRejected('http://exa mple.com/\u0001', 'URL_INVALID');
  assert.match(control.message, /\\u0001/);
});

test('hostOf gives the host key: hostname without trailing dot, plus a non-default port', () => {
  assert.equal(hostOf('http://Example.com/x'), 'example.com');
  assert.equal(hostOf('https://example.com:443/'), 'example.com');
  assert.equal(hostOf('https://example.com:8443/'), 'example.com:8443');
  assert.equal(hostOf('http://example.com.:8080/'), 'example.com:8080');
  assert.equal(hostOf('http://bücher.example/'), 'xn--bcher-kva.example');
  assert.equal(hostOf('http://[::1]:3000/'), '[::1]:3000');
  assert.equal(hostOf('http://user:pw@example.com/'), 'example.com');
  assert.throws(() => hostOf('/relative'), { code: 'URL_INVALID' });
  assert.throws(() => hostOf('ftp://example.com/'), { code: 'URL_UNSUPPORTED_SCHEME' });
});

test('normalizePercentEncoding returns its input when there is nothing to change', () => {
  const clean = '/a%2Fb?c=%E2%82%AC';
  assert.equal(normalizePercentEncoding(clean), clean);
  assert.equal(normalizePercentEncoding('/no/escapes'), '/no/escapes');
  assert.equal(normalizePercentEncoding('%'), '%');
  assert.equal(normalizePercentEncoding('%4'), '%4');
  assert.equal(normalizePercentEncoding('%41'), 'A');
  assert.equal(normalizePercentEncoding('x%2fy%7e'), 'x%2Fy~');
});

test('every escape of the 256 byte values is normalised as RFC 3986 says', () => {
  const unreserved = /^[A-Za-z0-9\-._~]$/;
  for (let byte = 0; byte < 256; byte++) {
    const hex = byte.toString(16).padStart(2, '0');
    const char = String.fromCharCode(byte);
    const expected = byte < 128 && unreserved.test(char) ? char : `%${hex.toUpperCase()}`;
    assert.equal(normalizePercentEncoding(`%${hex}`), expected, `%${hex}`);
    assert.equal(normalizePercentEncoding(`%${hex.toUpperCase()}`), expected, `%${hex.toUpperCase()}`);
  }
});
