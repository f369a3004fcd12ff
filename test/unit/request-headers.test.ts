import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RunHeaders } from '../../client/crawler/fetch/request-headers.js';
import {
  fetchSettingsOf,
  parseCrawlSettings,
  settingFromText,
  settingToText,
} from '../../shared/crawl-settings/index.js';
import { InvalidInputError } from '../../shared/errors.js';
import { parseRequestHeader, requestHeadersSchema } from '../../shared/protocol/request-headers.js';
import { settingsFromFlags } from '../../master/cli/crawl-flags.js';

const problemsOf = (value: unknown): string[] => {
  const parsed = requestHeadersSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
};

describe('a header as text', () => {
  test('"Name: value" goes to every host; a first word that is a host pattern names the host', () => {
    assert.deepEqual(parseRequestHeader('X-Api-Key: abc'), { name: 'X-Api-Key', value: 'abc' });
    assert.deepEqual(parseRequestHeader('  Accept-Language:de-CH, de;q=0.9  '), {
      name: 'Accept-Language',
      value: 'de-CH, de;q=0.9',
    });
    assert.deepEqual(parseRequestHeader('api.example.com Authorization: Bearer a:b c'), {
      host: 'api.example.com',
      name: 'Authorization',
      value: 'Bearer a:b c',
    });
    assert.deepEqual(parseRequestHeader('*.example.com:8443 X-Key: 1'), {
      host: '*.example.com:8443',
      name: 'X-Key',
      value: '1',
    });
    // "X:" is no host pattern: the value holds a colon.
    assert.deepEqual(parseRequestHeader('X: b: c'), { name: 'X', value: 'b: c' });
    assert.deepEqual(parseRequestHeader('X-Empty:'), { name: 'X-Empty', value: '' });
  });

  test('what is not a header is BAD_HEADER, and the message never shows the value', () => {
    for (const [line, why] of [
      ['X-Api-Key secret-1', /write it as "Name: value"/],
      ['User-Agent: secret-1', /User-Agent cannot be set: use userAgent/],
      ['Host: secret-1', /Host cannot be set/],
      ['cookie: secret-1', /cookie cannot be set: use cookies/],
      ['Proxy-Authorization: secret-1', /give the credentials in the proxy URL/],
      ['If-None-Match: secret-1', /conditionalRequests/],
      ['Bad(Name): secret-1', /a header name/],
      ['a.test Bad(Name): secret-1', /a header name/],
      ['X-Key: secret-1 \u2603', /Latin-1/],
    ] as const) {
      assert.throws(
        () => parseRequestHeader(line),
        (err: unknown) => {
          assert.ok(err instanceof InvalidInputError, line);
          assert.equal(err.code, 'BAD_HEADER');
          assert.match(err.message, why, line);
          assert.doesNotMatch(err.message, /secret-1/, line);
          return true;
        },
      );
    }
  });
});

describe('the headers setting', () => {
  test('refuses line breaks, reserved names, too many, and a name given twice for one host', () => {
    assert.deepEqual(problemsOf([{ name: 'X', value: 'a\r\nInjected: 1' }]), [
      'one line of Latin-1 text (no line breaks or control characters)',
    ]);
    assert.deepEqual(problemsOf([{ name: 'Content-Length', value: '1' }]), [
      'Content-Length cannot be set: the crawler sends GET requests without a body',
    ]);
    assert.deepEqual(problemsOf([{ name: 'X', value: '1', host: 'not a host' }]).length, 1);
    assert.deepEqual(problemsOf([{ name: 'X', value: '1', extra: true }]).length, 1);
    assert.deepEqual(
      problemsOf([
        { name: 'X-Key', value: '1', host: 'a.test' },
        { name: 'x-key', value: '2', host: 'A.test' },
        { name: 'X-Key', value: '3' },
      ]),
      ['x-key is given twice for A.test'],
    );
    assert.equal(
      problemsOf(Array.from({ length: 101 }, (_, i) => ({ name: `X-${i}`, value: '1' }))).length,
      1,
    );
    assert.deepEqual(problemsOf([{ name: 'X-Key', value: 'v' }]), []);
  });

  test('as text: one per line or JSON, and back; crawlers are sent it only when there are some', () => {
    const headers = settingFromText('headers', 'X-A: 1\na.test X-B:  two words \n\n');
    assert.deepEqual(headers, [
      { name: 'X-A', value: '1' },
      { host: 'a.test', name: 'X-B', value: 'two words' },
    ]);
    assert.deepEqual(settingFromText('headers', settingToText('headers', headers)), headers);
    const settings = parseCrawlSettings({ seeds: ['https://a.test/'], headers });
    assert.deepEqual(fetchSettingsOf(settings).headers, headers);
    assert.equal(fetchSettingsOf(parseCrawlSettings({ seeds: ['https://a.test/'] })).headers, undefined);
  });

  test('--header is repeatable; a bad one is a problem of its flag', () => {
    assert.deepEqual(settingsFromFlags({ header: ['X-A: 1', 'b.test X-B: 2'] }), {
      input: {
        headers: [
          { name: 'X-A', value: '1' },
          { host: 'b.test', name: 'X-B', value: '2' },
        ],
      },
      problems: [],
    });
    const { problems } = settingsFromFlags({ header: ['Connection: close'] });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /^--header: header "Connection: …": Connection cannot be set/);
  });
});

describe('RunHeaders: the headers of one request', () => {
  const headers = RunHeaders.of([
    { name: 'X-Key', value: 'any' },
    { name: 'X-Key', value: 'sub', host: '*.a.test' },
    { name: 'X-Key', value: 'exact', host: 'www.a.test' },
    { name: 'X-Key', value: 'port', host: 'www.a.test:8443' },
    { name: 'Authorization', value: 'Bearer b', host: 'b.test' },
  ]);
  const of = (url: string) => headers?.forUrl(new URL(url));

  test('the most specific pattern of each name wins; a header with no match is left out', () => {
    assert.deepEqual(of('https://c.test/'), { 'x-key': 'any' });
    assert.deepEqual(of('https://deep.x.a.test/'), { 'x-key': 'sub' });
    assert.deepEqual(of('https://WWW.a.test/'), { 'x-key': 'exact' });
    assert.deepEqual(of('https://www.a.test:8443/'), { 'x-key': 'port' });
    assert.deepEqual(of('https://b.test/x'), { 'x-key': 'any', authorization: 'Bearer b' });
    assert.equal(RunHeaders.of([]), null);
    assert.equal(RunHeaders.of(undefined), null);
  });

  test('a redirect drops every header of the run before it adds those of the next host', () => {
    const next: Record<string, string | string[] | undefined> = {
      'user-agent': 'ua',
      'x-key': 'any',
      authorization: 'Bearer b',
    };
    headers?.redirect(next, new URL('https://www.a.test/'));
    assert.deepEqual(next, { 'user-agent': 'ua', 'x-key': 'exact' });
  });
});
